package provisioning

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

func TestPlanSolvesThePodsAloneAndLaunchesNothing(t *testing.T) {
	w := newTestProvisioner(t, fakeCluster{err: assert.AnError})
	pods := []corev1.Pod{pod("a", nil), pod("b", nil), pod("c", nil), pod("d", nil), pod("e", nil), pod("arm", map[string]string{corev1.LabelArchStable: "arm64"})}
	in := make([]*corev1.Pod, len(pods))
	for i := range pods {
		in[i] = &pods[i]
	}

	plan, err := w.p.Plan(context.Background(), in)
	require.NoError(t, err)
	require.Len(t, plan.NewClaims, 2, "five one-CPU pods need two m5.xlarge")
	assert.Equal(t, "default", plan.NewClaims[0].NodePool)
	require.Len(t, plan.Unschedulable, 1)
	assert.Equal(t, "arm", plan.Unschedulable[0].Pod.Name)
	assert.Empty(t, w.ec2.requests, "a plan launches nothing")
	assert.True(t, leaseFree(t, w.store), "a plan does not take the lease")
}
