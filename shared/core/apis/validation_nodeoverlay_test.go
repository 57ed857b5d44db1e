package apis_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/nodewright/nodewright/shared/core/apis"
)

func validOverlay() *apis.NodeOverlay {
	adj, w := "-30%", int32(10)
	return &apis.NodeOverlay{
		TypeMeta:   metav1.TypeMeta{APIVersion: apis.NodeOverlayAPIVersion, Kind: apis.KindNodeOverlay},
		ObjectMeta: metav1.ObjectMeta{Name: "savings-plan"},
		Spec: apis.NodeOverlaySpec{
			Requirements:    []corev1.NodeSelectorRequirement{{Key: apis.LabelInstanceFamily, Operator: corev1.NodeSelectorOpIn, Values: []string{"m5"}}},
			PriceAdjustment: &adj, Weight: &w,
			Capacity: corev1.ResourceList{"example.com/fpga": resource.MustParse("2")},
		},
	}
}

func strPtr(s string) *string { return &s }

func TestValidateNodeOverlayAcceptsKarpentersForms(t *testing.T) {
	require.Empty(t, apis.ValidateNodeOverlay(validOverlay()))
	for _, adj := range []string{"+0.5", "-0.5", "+.25", "-1", "+10%", "+150%", "-15%", "-99.5%", "-100%", "-0.5%"} {
		o := validOverlay()
		o.Spec.PriceAdjustment = strPtr(adj)
		assert.Empty(t, apis.ValidateNodeOverlay(o), adj)
	}
	for _, p := range []string{"0", "0.42", "12"} {
		o := validOverlay()
		o.Spec.PriceAdjustment, o.Spec.Price = nil, strPtr(p)
		assert.Empty(t, apis.ValidateNodeOverlay(o), p)
	}
	o := validOverlay()
	o.Spec.Weight, o.Spec.Requirements = nil, nil
	assert.Empty(t, apis.ValidateNodeOverlay(o), "weight and requirements are optional")
}

// TestValidateNodeOverlayNamesTheField checks that every rule's error names its field and type.
func TestValidateNodeOverlayNamesTheField(t *testing.T) {
	w := func(v int32) *int32 { return &v }
	cases := []struct {
		name   string
		mutate func(*apis.NodeOverlay)
		field  string
		typ    field.ErrorType
	}{
		{"name missing", func(o *apis.NodeOverlay) { o.Name = "" }, "metadata.name", field.ErrorTypeRequired},
		{"too many requirements", func(o *apis.NodeOverlay) {
			for range 100 {
				o.Spec.Requirements = append(o.Spec.Requirements, corev1.NodeSelectorRequirement{Key: "team", Operator: corev1.NodeSelectorOpExists})
			}
		}, "spec.requirements", field.ErrorTypeTooMany},
		{"unknown operator", func(o *apis.NodeOverlay) { o.Spec.Requirements[0].Operator = "Like" }, "spec.requirements[0].operator", field.ErrorTypeNotSupported},
		{"In without values", func(o *apis.NodeOverlay) { o.Spec.Requirements[0].Values = nil }, "spec.requirements[0].values", field.ErrorTypeRequired},
		{"NotIn without values", func(o *apis.NodeOverlay) {
			o.Spec.Requirements[0].Operator, o.Spec.Requirements[0].Values = corev1.NodeSelectorOpNotIn, nil
		}, "spec.requirements[0].values", field.ErrorTypeRequired},
		{"Gt not a number", func(o *apis.NodeOverlay) {
			o.Spec.Requirements[0] = corev1.NodeSelectorRequirement{Key: apis.LabelInstanceCPU, Operator: corev1.NodeSelectorOpGt, Values: []string{"many"}}
		}, "spec.requirements[0].values[0]", field.ErrorTypeInvalid},
		{"restricted key", func(o *apis.NodeOverlay) { o.Spec.Requirements[0].Key = corev1.LabelHostname }, "spec.requirements[0].key", field.ErrorTypeInvalid},
		{"key not qualified", func(o *apis.NodeOverlay) { o.Spec.Requirements[0].Key = "bad key" }, "spec.requirements[0].key", field.ErrorTypeInvalid},
		{"value not a label value", func(o *apis.NodeOverlay) { o.Spec.Requirements[0].Values = []string{"not valid!"} }, "spec.requirements[0].values[0]", field.ErrorTypeInvalid},
		{"price and adjustment", func(o *apis.NodeOverlay) { o.Spec.Price = strPtr("1") }, "spec.priceAdjustment", field.ErrorTypeForbidden},
		{"price signed", func(o *apis.NodeOverlay) { o.Spec.PriceAdjustment, o.Spec.Price = nil, strPtr("-1") }, "spec.price", field.ErrorTypeInvalid},
		{"price a percentage", func(o *apis.NodeOverlay) { o.Spec.PriceAdjustment, o.Spec.Price = nil, strPtr("10%") }, "spec.price", field.ErrorTypeInvalid},
		{"adjustment unsigned", func(o *apis.NodeOverlay) { o.Spec.PriceAdjustment = strPtr("10%") }, "spec.priceAdjustment", field.ErrorTypeInvalid},
		{"adjustment below -100%", func(o *apis.NodeOverlay) { o.Spec.PriceAdjustment = strPtr("-101%") }, "spec.priceAdjustment", field.ErrorTypeInvalid},
		{"adjustment not a number", func(o *apis.NodeOverlay) { o.Spec.PriceAdjustment = strPtr("-a") }, "spec.priceAdjustment", field.ErrorTypeInvalid},
		{"capacity cpu", func(o *apis.NodeOverlay) { o.Spec.Capacity[corev1.ResourceCPU] = resource.MustParse("1") }, "spec.capacity[cpu]", field.ErrorTypeForbidden},
		{"capacity memory", func(o *apis.NodeOverlay) { o.Spec.Capacity[corev1.ResourceMemory] = resource.MustParse("1Gi") }, "spec.capacity[memory]", field.ErrorTypeForbidden},
		{"capacity ephemeral storage", func(o *apis.NodeOverlay) {
			o.Spec.Capacity[corev1.ResourceEphemeralStorage] = resource.MustParse("1Gi")
		}, "spec.capacity[ephemeral-storage]", field.ErrorTypeForbidden},
		{"capacity pods", func(o *apis.NodeOverlay) { o.Spec.Capacity[corev1.ResourcePods] = resource.MustParse("10") }, "spec.capacity[pods]", field.ErrorTypeForbidden},
		{"capacity negative", func(o *apis.NodeOverlay) { o.Spec.Capacity["example.com/fpga"] = resource.MustParse("-1") }, "spec.capacity[example.com/fpga]", field.ErrorTypeInvalid},
		{"capacity fractional", func(o *apis.NodeOverlay) { o.Spec.Capacity["example.com/fpga"] = resource.MustParse("500m") }, "spec.capacity[example.com/fpga]", field.ErrorTypeInvalid},
		{"weight 0", func(o *apis.NodeOverlay) { o.Spec.Weight = w(0) }, "spec.weight", field.ErrorTypeInvalid},
		{"weight above 10000", func(o *apis.NodeOverlay) { o.Spec.Weight = w(10001) }, "spec.weight", field.ErrorTypeInvalid},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := validOverlay()
			tc.mutate(o)
			errs := apis.ValidateNodeOverlay(o)
			require.NotEmpty(t, errs)
			found := false
			for _, e := range errs {
				if e.Field == tc.field && e.Type == tc.typ {
					found = true
				}
			}
			assert.True(t, found, "want %s %s in %v", tc.typ, tc.field, errs)
		})
	}
}

func TestDecodeNodeOverlayAndList(t *testing.T) {
	doc := `apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata: {name: a}
spec:
  requirements: [{key: karpenter.k8s.aws/instance-family, operator: In, values: [m5]}]
  priceAdjustment: "-30%"
  weight: 5
---
apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlayList
items:
- metadata: {name: b}
  spec: {price: "0.1"}
---
apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata: {name: c}
spec: {pricee: "0.1"}
`
	objs, err := apis.Decode("o.yaml", []byte(doc))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `o.yaml: document 3: strict decoding error: unknown field "spec.pricee"`)
	require.Len(t, objs.NodeOverlays, 2)
	assert.Equal(t, "a", objs.NodeOverlays[0].Name)
	assert.Equal(t, "-30%", *objs.NodeOverlays[0].Spec.PriceAdjustment)
	assert.Equal(t, apis.Origin{File: "o.yaml", Document: 2, Item: 0}, objs.NodeOverlays[1].Origin)

	_, err = apis.Decode("v.yaml", []byte("apiVersion: karpenter.sh/v1\nkind: NodeOverlay\nmetadata: {name: x}\nspec: {}\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unsupported apiVersion "karpenter.sh/v1" for kind NodeOverlay: want karpenter.sh/v1alpha1`)
}

func TestDefaultAndValidateRefusesDuplicateOverlays(t *testing.T) {
	objs := apis.Objects{NodeOverlays: []*apis.NodeOverlay{validOverlay(), validOverlay()}}
	errs := apis.DefaultAndValidate(objs)
	require.Len(t, errs, 1)
	assert.True(t, strings.Contains(errs[0].Error(), "NodeOverlay/savings-plan: metadata.name: Duplicate value"), errs[0].Error())
}
