package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodewright/nodewright/shared/testsupport/kubetest"
)

// During a migration Karpenter's NodePools may keep the names of Nodewright's: a Karpenter Node labelled
// karpenter.sh/nodepool=default (its own pool's taint keeps Nodewright's pods off it) uses up none of
// Nodewright's NodePool default's limit of 16 CPUs. The old code counted its 16 CPUs and launched nothing.
func TestKarpentersNodesDoNotUseUpNodePoolLimits(t *testing.T) {
	w := newAWSWorld(t)
	w.applyConfig(t, strings.Replace(config, "spec:\n  template:", "spec:\n  limits:\n    cpu: \"16\"\n  template:", 1))
	cp := kubetest.Shared(t, kubetest.Options{Scheduler: true})
	ns := cp.Namespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	poolNode(t, cp, "karpenters-"+ns, "default", "i-0karpenters16", corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("16"),
		corev1.ResourceMemory: resource.MustParse("64Gi"), corev1.ResourcePods: resource.MustParse("110")},
		corev1.Taint{Key: "karpenter-only", Effect: corev1.TaintEffectNoSchedule})
	createPendingPods(t, cp.Client, ns, 2)

	rep, err := newProvisioner(t, w, cp, ns).Run(ctx, "run-limits")
	require.NoError(t, err)
	assert.Equal(t, 2, rep.PendingPods)
	assert.Empty(t, rep.Unschedulable, "the limit is Nodewright's own capacity's")
	require.NotEmpty(t, rep.Claims)
	assert.Len(t, w.claimedInstances(t), len(rep.Claims))
}
