package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/settings"
)

// enableNodeRepair stores settings with the NodeRepair feature gate on, as the CDK deployment does.
func (e *env) enableNodeRepair(t testing.TB) {
	t.Helper()
	s := settings.Default()
	s.FeatureGates.NodeRepair = true
	item, err := state.SettingsItem(s)
	require.NoError(t, err)
	_, err = e.store.PutConfig(context.Background(), item)
	require.NoError(t, err)
}

// setReady sets the Node's Ready condition to status, as the node lifecycle controller does when the
// kubelet stops reporting, dated at.
func (e *env) setReady(t testing.TB, name string, status corev1.ConditionStatus, at time.Time) {
	t.Helper()
	require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n := e.node(t, name)
		for i := range n.Status.Conditions {
			if n.Status.Conditions[i].Type == corev1.NodeReady {
				n.Status.Conditions[i].Status, n.Status.Conditions[i].LastTransitionTime = status, metav1.NewTime(at)
				n.Status.Conditions[i].Reason = "NodeStatusUnknown"
			}
		}
		_, err := e.kube.CoreV1().Nodes().UpdateStatus(context.Background(), n, metav1.UpdateOptions{})
		return err
	}))
}

// With NodeRepair on, a Node whose kubelet stopped reporting (Ready=Unknown) while its instance runs is
// left for 29 minutes and, at 31, its claim gets node repair's disruption request; the lifecycle itself
// removes nothing. The status checks are read from EC2 on the way (moto answers none impaired).
func TestNodeRepairRequestsTheReplacementOfANodeNotReadyForThirtyMinutes(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.enableNodeRepair(t)
	inst := e.launch(t, "default-sick1", "default")
	e.launchedClaim(t, "default-sick1", "default", inst)
	n := e.joinNode(t, "ip-10-0-9-1.ec2.internal", inst, "default")
	r := e.runner(nil)
	rep, err := r.Run(ctx, "run-1")
	require.NoError(t, err)
	require.Equal(t, 1, rep.Registered, rep.String())
	rep, err = r.Run(ctx, "run-1b")
	require.NoError(t, err)
	require.Equal(t, state.Initialized, e.claim(t, "default-sick1").Lifecycle, rep.String())

	e.setReady(t, n.Name, corev1.ConditionUnknown, time.Now())
	e.clock.set(29 * time.Minute)
	rep, err = r.Run(ctx, "run-2")
	require.NoError(t, err)
	assert.Empty(t, rep.Repairs, rep.String())
	assert.Nil(t, e.claim(t, "default-sick1").DisruptionRequest)

	e.clock.set(31 * time.Minute)
	rep, err = r.Run(ctx, "run-3")
	require.NoError(t, err)
	require.Len(t, rep.Repairs, 1, rep.String())
	c := e.claim(t, "default-sick1")
	require.NotNil(t, c.DisruptionRequest)
	require.NotNil(t, c.DisruptionRequest.Unhealthy)
	assert.Equal(t, "Ready", c.DisruptionRequest.Unhealthy.Type)
	assert.Equal(t, "Unknown", c.DisruptionRequest.Unhealthy.Status)
	assert.Equal(t, state.RepairRequester, c.DisruptionRequest.By)
	assert.Equal(t, state.Initialized, c.Lifecycle, "the disruption run acts on the request, replacement first")
	assert.Contains(t, e.decisions(t, "nodeclaim/default-sick1"), "NodeRepair/Unhealthy")
	assert.Empty(t, e.terminationRequests(t), "the lifecycle hands nothing to termination for a repair")
	assert.Equal(t, "running", e.instanceState(t, inst.ID))
}
