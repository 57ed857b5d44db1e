package provisioning

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodewright/nodewright/shared/adapters/kube"
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

// gatheredEvents answers a Publish only once its gate has gathered maxEventWrites of them.
type gatheredEvents struct {
	recordedEvents
	gate *gate
}

func (g *gatheredEvents) Publish(ctx context.Context, e kube.Event) (bool, error) {
	leave, err := g.gate.pass(ctx)
	defer leave()
	if err != nil {
		return false, err
	}
	return g.recordedEvents.Publish(ctx, e)
}

// TestARunWritesItsNominationsAtOnce: the Nominated Events of a launch go out maxEventWrites at a time.
// One after another, fifty of them held the lease, and every pod marked meanwhile waited, for fifty API
// server round trips (seen in the detection scenario: a second of each run). Fails on the sequential
// writes: the first waits for the others, which are never made.
func TestARunWritesItsNominationsAtOnce(t *testing.T) {
	var pods []corev1.Pod
	for i := range 2 * maxEventWrites {
		p := pod(fmt.Sprint("web-", i), nil)
		p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("100m") // one node for all
		pods = append(pods, p)
	}
	w := newTestProvisioner(t, fakeCluster{snap: pendingSnapshot(pods...)})
	rec := &gatheredEvents{gate: newGate(maxEventWrites)}
	w.p.deps.Events = rec

	rep, err := w.p.Run(context.Background(), "run-1")
	require.NoError(t, err)
	require.Len(t, rep.Claims, 1)
	assert.Empty(t, rep.Errors)
	assert.Len(t, rec.events, len(pods), "every pod is told where it goes")
	assert.Equal(t, maxEventWrites, rec.gate.maxInFlight(), "the writes were in flight together, and no more than the bound")
}
