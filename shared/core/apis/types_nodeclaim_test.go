package apis_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/nodewright/nodewright/shared/core/apis"
)

func TestNewNodeClaim(t *testing.T) {
	np := baseNodePool(t)
	claim := apis.NewNodeClaim(np)
	assert.Equal(t, apis.KindNodeClaim, claim.Kind)
	assert.Equal(t, "karpenter.sh/v1", claim.APIVersion)
	assert.Equal(t, "base", claim.Labels[apis.NodePoolLabelKey])
	assert.Equal(t, "a", claim.Labels["team"])
	assert.Equal(t, "base", claim.Labels[apis.NodeClassLabelKey])
	assert.Equal(t, apis.NodePoolTemplateHash(np), claim.Annotations[apis.NodePoolHashAnnotationKey])
	assert.Equal(t, apis.NodePoolHashVersion, claim.Annotations[apis.NodePoolHashVersionAnnotationKey])
	assert.Equal(t, np.Spec.Template.Spec.Requirements, claim.Spec.Requirements)
	assert.Equal(t, np.Spec.Template.Spec.Taints, claim.Spec.Taints)
	assert.Equal(t, np.Spec.Template.Spec.StartupTaints, claim.Spec.StartupTaints)
	assert.Equal(t, np.Spec.Template.Spec.NodeClassRef, claim.Spec.NodeClassRef)
	assert.Equal(t, apis.NillableDuration("720h"), claim.Spec.ExpireAfter)
	assert.Equal(t, ptr(apis.Duration("1h")), claim.Spec.TerminationGracePeriod)
	assert.Empty(t, apis.ValidateNodeClaim(claim))

	claim.Labels["team"] = "changed"
	claim.Spec.Requirements[0].Values[0] = "changed"
	assert.Equal(t, "a", np.Spec.Template.ObjectMeta.Labels["team"], "the claim shares nothing with the pool")
	assert.Equal(t, "spot", np.Spec.Template.Spec.Requirements[0].Values[0])

	cc := claim.DeepCopy()
	assert.Equal(t, claim, cc)
}

func TestProviderID(t *testing.T) {
	id := apis.ProviderID("us-west-2a", "i-0123456789abcdef0")
	assert.Equal(t, "aws:///us-west-2a/i-0123456789abcdef0", id)
	zone, instance, ok := apis.ParseProviderID(id)
	assert.True(t, ok)
	assert.Equal(t, "us-west-2a", zone)
	assert.Equal(t, "i-0123456789abcdef0", instance)
	for _, bad := range []string{"", "aws:///us-west-2a", "aws:///us-west-2a/", "gce:///z/i", "aws:///z/i/j", "aws:////i-1"} {
		_, _, ok := apis.ParseProviderID(bad)
		assert.False(t, ok, bad)
	}
}
