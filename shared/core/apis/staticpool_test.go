package apis_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/nodewright/nodewright/shared/core/apis"
)

// staticNodePool is the base NodePool made static: replicas, no weight, only a nodes limit.
func staticNodePool(t *testing.T, replicas int64) *apis.NodePool {
	t.Helper()
	np := baseNodePool(t)
	np.Spec.Replicas = ptr(replicas)
	np.Spec.Weight = nil
	np.Spec.Limits = corev1.ResourceList{"nodes": resource.MustParse("5")}
	return np
}

// TestStaticNodePoolIsValid: a static pool (replicas ≥ 0, no weight, only limits.nodes) validates with no
// error; it was refused as not supported before the StaticCapacity gate was implemented.
func TestStaticNodePoolIsValid(t *testing.T) {
	for _, n := range []int64{0, 3} {
		assert.Empty(t, apis.ValidateNodePool(staticNodePool(t, n)), "replicas %d", n)
	}
	np := staticNodePool(t, 2)
	np.Spec.Limits = nil
	assert.Empty(t, apis.ValidateNodePool(np), "a static pool needs no limits")
}

// TestStaticNodePoolErrorsNameTheirFields: each of Karpenter's CEL rules for static pools is one error at
// its own field, and nothing else is reported (no "not supported yet").
func TestStaticNodePoolErrorsNameTheirFields(t *testing.T) {
	np := staticNodePool(t, -1)
	np.Spec.Weight = ptr(int32(10))
	np.Spec.Limits["cpu"] = resource.MustParse("100")
	errs := apis.ValidateNodePool(np)
	got := map[string]field.ErrorType{}
	for _, e := range errs {
		got[e.Field] = e.Type
	}
	assert.Equal(t, map[string]field.ErrorType{
		"spec.replicas": field.ErrorTypeInvalid,
		"spec.limits":   field.ErrorTypeForbidden,
		"spec.weight":   field.ErrorTypeForbidden,
	}, got, "%v", errs)
	require.Len(t, errs, 3)
	for _, e := range errs {
		assert.NotContains(t, e.Detail, apis.NotSupportedYet)
	}
}

// TestStaticNodePoolNeedsItsGate: with StaticCapacity off a static pool is refused at spec.replicas,
// saying which gate to turn on; with it on, and for dynamic pools either way, nothing is refused.
func TestStaticNodePoolNeedsItsGate(t *testing.T) {
	static := staticNodePool(t, 3)
	dynamic := baseNodePool(t)
	objs := apis.Objects{NodePools: []*apis.NodePool{dynamic, static}}
	errs := apis.RefuseGated(objs, apis.Gates{})
	require.Len(t, errs, 1)
	assert.Equal(t, static.Name, errs[0].Name)
	assert.Equal(t, "spec.replicas", errs[0].Err.Field)
	assert.Equal(t, field.ErrorTypeForbidden, errs[0].Err.Type)
	assert.Contains(t, errs[0].Error(), "featureGates=StaticCapacity=true")
	assert.Empty(t, apis.RefuseGated(objs, apis.Gates{StaticCapacity: true}))
}
