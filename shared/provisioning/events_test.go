package provisioning

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/kube"
)

type recordedEvents struct {
	mu     sync.Mutex
	events []kube.Event
}

func (r *recordedEvents) Publish(_ context.Context, e kube.Event) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
	return true, nil
}

func TestRunPublishesNominatedAndFailedScheduling(t *testing.T) {
	snap := pendingSnapshot(pod("a", nil), pod("b", nil), pod("arm", map[string]string{corev1.LabelArchStable: "arm64"}))
	w := newTestProvisioner(t, fakeCluster{snap: snap})
	rec := &recordedEvents{}
	w.p.deps.Events = rec

	rep, err := w.p.Run(context.Background(), "run-1")
	require.NoError(t, err)
	require.Len(t, rep.Claims, 1)

	byPod := map[string]kube.Event{}
	for _, e := range rec.events {
		byPod[e.Object.Namespace+"/"+e.Object.Name] = e
	}
	require.Len(t, byPod, 3, "one event per pod: %+v", rec.events)
	for _, name := range []string{"ns/a", "ns/b"} {
		assert.Equal(t, kube.ReasonNominated, byPod[name].Reason, name)
		assert.Equal(t, "Pod should schedule on: nodeclaim/"+rep.Claims[0].Name, byPod[name].Message, name)
	}
	arm := byPod["ns/arm"]
	assert.Equal(t, kube.ReasonFailedScheduling, arm.Reason)
	assert.Equal(t, corev1.EventTypeWarning, arm.Type)
	assert.Contains(t, arm.Message, "Failed to schedule pod, ")
	assert.Contains(t, arm.Message, rep.Unschedulable[0].Reason)
}
