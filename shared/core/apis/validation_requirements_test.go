package apis_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/nodewright/nodewright/shared/core/apis"
)

func TestSharedValidators(t *testing.T) {
	p := field.NewPath("x")
	assert.Empty(t, apis.ValidateRequirements([]apis.NodeSelectorRequirementWithMinValues{
		{Key: "kubernetes.io/arch", Operator: corev1.NodeSelectorOpIn, Values: []string{"arm64"}, MinValues: ptr(1)},
		{Key: "beta.kubernetes.io/os", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"windows"}},
		{Key: "karpenter.k8s.aws/instance-family", Operator: corev1.NodeSelectorOpExists, MinValues: ptr(5)},
	}, p))
	assert.Empty(t, apis.ValidateTaints(
		[]corev1.Taint{{Key: "a", Effect: corev1.TaintEffectNoSchedule}, {Key: "a", Effect: corev1.TaintEffectNoExecute}},
		[]corev1.Taint{{Key: "a", Effect: corev1.TaintEffectPreferNoSchedule}}, p), "same key with different effects")
	assert.Empty(t, apis.ValidateTemplateLabels(map[string]string{"team": "", "example.com/x": "y"}, p), "empty label values are valid")
	assert.Empty(t, apis.ValidateNodeClassRef(&apis.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "x"}, p))

	errs := apis.ValidateTemplateLabels(map[string]string{"karpenter.sh/foo": "x"}, field.NewPath("spec", "template", "metadata", "labels"))
	if assert.Len(t, errs, 1) {
		assert.Equal(t, `spec.template.metadata.labels: Invalid value: "karpenter.sh/foo": label domain karpenter.sh is restricted; use a well-known label or a custom label outside it`, errs[0].Error())
	}
}

func TestGenerateNameIsNotEnough(t *testing.T) {
	np := baseNodePool(t)
	np.Name = ""
	np.GenerateName = "pool-"
	assertHasError(t, apis.ValidateNodePool(np), "metadata.name", field.ErrorTypeRequired)
}
