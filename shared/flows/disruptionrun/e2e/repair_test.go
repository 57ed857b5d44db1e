package e2e

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/disruption"
)

// requestRepair marks node's Ready condition Unknown (its kubelet stopped reporting 31 minutes ago) and
// writes node repair's disruption request on its claim, as the lifecycle does with NodeRepair on.
func (w *world) requestRepair(node string) {
	w.t.Helper()
	since := time.Now().Add(-31 * time.Minute)
	require.NoError(w.t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := w.client.CoreV1().Nodes().Get(w.ctx, node, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for i := range n.Status.Conditions {
			if n.Status.Conditions[i].Type == corev1.NodeReady {
				n.Status.Conditions[i].Status, n.Status.Conditions[i].LastTransitionTime = corev1.ConditionUnknown, metav1.NewTime(since)
			}
		}
		_, err = w.client.CoreV1().Nodes().UpdateStatus(w.ctx, n, metav1.UpdateOptions{})
		return err
	}))
	_, err := w.store.UpdateClaim(w.ctx, "claim-"+node, func(c *state.Claim) error {
		c.DisruptionRequest = &state.DisruptionRequest{Reason: "Ready=Unknown for 31m0s (tolerated for 30m0s)", RequestedAt: time.Now(),
			By: state.RepairRequester, Unhealthy: &state.UnhealthyCondition{Type: "Ready", Status: "Unknown", Since: since, Toleration: 30 * time.Minute}}
		return nil
	})
	require.NoError(w.t, err)
}

// Node repair's request goes under a budget of "0" and past a do-not-disrupt pod, for the reason
// Unhealthy: replacement first, then termination.
func TestUnhealthyNodeIsReplacedFirstUnderAZeroBudget(t *testing.T) {
	w := newWorld(t, "0")
	sick := w.node("sick", "m5.large", "2", nil)
	w.pod("precious", sick, "1500m", map[string]string{disruption.AnnotationDoNotDisrupt: "true"})
	busy := w.node("busy", "m5.large", "2", nil, "1500m")
	w.requestRepair(sick)

	r := w.runner("", nil)
	rep, err := r.Run(w.ctx, "run-1")
	require.NoError(t, err)
	require.Empty(t, rep.Skipped)
	require.Len(t, rep.Commands, 1, "errors: %v, rejected: %v", rep.Errors, rep.Rejected)
	cmd := rep.Commands[0]
	assert.Equal(t, disruption.ReasonUnhealthy, cmd.Reason)
	assert.Equal(t, disruption.MethodForceful, cmd.Method)
	assert.Equal(t, disruption.ActionReplace, cmd.Action)
	require.Len(t, cmd.Nodes, 1)
	assert.Equal(t, sick, cmd.Nodes[0].Name)
	assert.Empty(t, w.terminationRequests(), "nothing drains before the replacement is up")
	c, repl := w.replacementOf("claim-" + sick)

	w.initialize(repl.Name, "replacement-"+w.ns)
	rep, err = r.Run(w.ctx, "run-2")
	require.NoError(t, err)
	assert.Contains(t, rep.Advanced, c.ID+": terminating")
	assert.Equal(t, map[string]string{"claim-" + sick: "Unhealthy"}, w.terminationRequests())
	assert.False(t, w.tainted(busy))
}
