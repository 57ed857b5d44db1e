package provisioning

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// optedOut is a pending pod that declines Karpenter's nodes (karpenter.sh/nodepool DoesNotExist), a
// Karpenter controller replica say.
func optedOut(name string) corev1.Pod {
	p := pod(name, nil)
	p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
			{Key: scheduling.LabelNodePool, Operator: corev1.NodeSelectorOpDoesNotExist}}}}}}}
	return p
}

// A pod that opts out of Karpenter's nodes is ignored as Karpenter ignores it: no launch, no decision
// record, no FailedScheduling Event; it is not even counted as pending.
func TestRunIgnoresPodsThatOptOut(t *testing.T) {
	t.Run("alone", func(t *testing.T) {
		w := newTestProvisioner(t, fakeCluster{snap: pendingSnapshot(optedOut("karpenter"))})
		rec := &recordedEvents{}
		w.p.deps.Events = rec
		rep, err := w.p.Run(context.Background(), "run-1")
		require.NoError(t, err)
		assert.Zero(t, rep.PendingPods)
		assert.Empty(t, rep.Claims)
		assert.Empty(t, rep.Unschedulable)
		assert.Empty(t, w.ec2.requests)
		assert.Empty(t, rec.events)
		d, err := w.store.Decisions(context.Background(), "pod/ns/karpenter", 10)
		require.NoError(t, err)
		assert.Empty(t, d)
	})
	t.Run("beside a pod that is provisioned for", func(t *testing.T) {
		w := newTestProvisioner(t, fakeCluster{snap: pendingSnapshot(optedOut("karpenter"), pod("web", nil))})
		rec := &recordedEvents{}
		w.p.deps.Events = rec
		rep, err := w.p.Run(context.Background(), "run-1")
		require.NoError(t, err)
		assert.Equal(t, 1, rep.PendingPods)
		require.Len(t, rep.Claims, 1)
		assert.Equal(t, 1, rep.Claims[0].Pods)
		assert.Empty(t, rep.Unschedulable)
		for _, e := range rec.events {
			assert.NotEqual(t, "karpenter", e.Object.Name, "%s Event about the pod that opted out", e.Reason)
		}
		assert.Contains(t, reasonsOf(rec.events), kube.ReasonNominated)
		d, err := w.store.Decisions(context.Background(), "pod/ns/karpenter", 10)
		require.NoError(t, err)
		assert.Empty(t, d)
	})
}

func reasonsOf(events []kube.Event) []kube.Reason {
	out := make([]kube.Reason, 0, len(events))
	for _, e := range events {
		out = append(out, e.Reason)
	}
	return out
}
