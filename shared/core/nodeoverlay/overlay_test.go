package nodeoverlay

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/core/apis"
)

func TestAdjustedPrice(t *testing.T) {
	for _, tc := range []struct {
		change string
		want   float64
	}{
		{"0.42", 0.42},    // an absolute price replaces
		{"0", 0},          // free
		{"+0.1", 1.1},     // an amount adds
		{"-0.25", 0.75},   // or takes away
		{"-5", 0},         // never below 0
		{"+10%", 1.1},     // a percentage scales
		{"-30%", 0.7},     // a Savings Plan discount
		{"-100%", 0},      // down to nothing
		{"+150%", 2.5},    // more than double
		{"-12.5%", 0.875}, // fractional percentage
		{"", 1},           // no change
		{"bogus", 1},      // refused by validation; unchanged if it ever got here
	} {
		assert.InDelta(t, tc.want, AdjustedPrice(1, tc.change), 1e-9, tc.change)
	}
}

func TestFromAPI(t *testing.T) {
	adj, w := "-30%", int32(7)
	no := &apis.NodeOverlay{ObjectMeta: metav1.ObjectMeta{Name: "sp"}, Spec: apis.NodeOverlaySpec{
		Requirements:    []corev1.NodeSelectorRequirement{{Key: apis.LabelInstanceFamily, Operator: corev1.NodeSelectorOpIn, Values: []string{"m5"}}},
		PriceAdjustment: &adj, Weight: &w, Capacity: corev1.ResourceList{"example.com/fpga": resource.MustParse("2")},
	}}
	o, err := FromAPI(no)
	require.NoError(t, err)
	assert.Equal(t, "sp", o.Name)
	assert.Equal(t, int32(7), o.Weight)
	assert.Equal(t, "-30%", o.Price)
	assert.Equal(t, map[string]int64{"example.com/fpga": 2}, o.Capacity)
	assert.True(t, o.Requirements.Get(apis.LabelInstanceFamily).Has("m5"))

	no.Spec.Weight = nil
	o, err = FromAPI(no)
	require.NoError(t, err)
	assert.Equal(t, int32(0), o.Weight, "an unset weight counts as 0")

	bad := "30%"
	no.Spec.PriceAdjustment = &bad
	_, err = FromAPI(no)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "NodeOverlay sp: spec.price")

	no.Spec.PriceAdjustment = &adj
	no.Spec.Capacity = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	_, err = FromAPI(no)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "spec.capacity[cpu]")
}

func TestOrderIsWeightThenNameZToA(t *testing.T) {
	ovs := []Overlay{{Name: "a", Weight: 1}, {Name: "b", Weight: 5}, {Name: "c", Weight: 1}, {Name: "d"}}
	order(ovs)
	var names []string
	for _, o := range ovs {
		names = append(names, o.Name)
	}
	assert.Equal(t, []string{"b", "c", "a", "d"}, names)
}
