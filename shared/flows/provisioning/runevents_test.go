package provisioning

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/mirror"
	"github.com/nodewright/nodewright/shared/adapters/nodeclass"
	"github.com/nodewright/nodewright/shared/core/apis"
)

// of lists the Events of reason, by "Kind/name".
func (r *recordedEvents) of(reason kube.Reason) map[string]kube.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]kube.Event{}
	for _, e := range r.events {
		if e.Reason == reason {
			out[e.Object.Kind+"/"+e.Object.Name] = e
		}
	}
	return out
}

// A launch that finds no capacity anywhere tells its NodeClaim and the pods it was for, as Karpenter's
// launch publishes InsufficientCapacityError.
func TestLaunchWithoutCapacityPublishesInsufficientCapacityError(t *testing.T) {
	w := newTestProvisioner(t, fakeCluster{snap: pendingSnapshot(pod("a", nil), pod("b", nil))})
	w.ec2.capacity = map[instance.Offering]bool{} // every offering is short
	rec := &recordedEvents{}
	w.p.deps.Events = rec

	rep, err := w.p.Run(context.Background(), "run-1")
	require.NoError(t, err)
	require.Len(t, rep.LaunchFailures, 1)
	claim := rep.LaunchFailures[0].Claim
	got := rec.of(kube.ReasonInsufficientCapacityError)
	require.Len(t, got, 3, "the claim and its two pods: %+v", got)
	onClaim := got["NodeClaim/"+claim]
	assert.Equal(t, corev1.EventTypeWarning, onClaim.Type)
	assert.Equal(t, mirror.APIVersion, onClaim.Object.APIVersion, "on the NodeClaim mirror (the publisher gives it its UID)")
	assert.Contains(t, onClaim.Message, "found no capacity")
	assert.Contains(t, onClaim.Message, ErrNoCapacity.Error())
	for _, name := range []string{"a", "b"} {
		e := got["Pod/"+name]
		assert.Equal(t, "ns", e.Object.Namespace, name)
		assert.Contains(t, e.Message, "NodeClaim "+claim, name)
	}
}

// A launch that fails for another reason is no capacity Event.
func TestOtherLaunchFailuresAreNoCapacityEvents(t *testing.T) {
	w := newTestProvisioner(t, fakeCluster{snap: pendingSnapshot(pod("a", nil))})
	w.ec2.err = &instance.LaunchError{Code: "UnauthorizedOperation", Message: "no"}
	rec := &recordedEvents{}
	w.p.deps.Events = rec
	rep, err := w.p.Run(context.Background(), "run-1")
	require.NoError(t, err)
	require.Len(t, rep.LaunchFailures, 1)
	assert.Empty(t, rec.of(kube.ReasonInsufficientCapacityError))
}

// However many claims fail, one run publishes at most maxCapacityEvents of them, claims first.
func TestCapacityEventsAreBounded(t *testing.T) {
	var failures []LaunchFailure
	for i := range 30 {
		p := unschedulable(fmt.Sprint("p", i))
		failures = append(failures, LaunchFailure{Claim: fmt.Sprint("c", i), NodePool: "default", Reason: NoCapacity,
			Err: ErrNoCapacity, pods: []*corev1.Pod{&p}})
	}
	evs := capacityEvents(failures)
	require.Len(t, evs, maxCapacityEvents)
	for _, e := range evs {
		assert.Equal(t, "NodeClaim", e.Object.Kind)
	}
}

// A NodePool whose EC2NodeClass is not Ready launches nothing and says so on the NodePool; a class
// whose resolution failed for a transient error is not reported (the next run tries again).
func TestNotReadyNodeClassPublishesNodeClassNotReady(t *testing.T) {
	t.Run("not ready", func(t *testing.T) {
		w := newTestProvisioner(t, fakeCluster{snap: pendingSnapshot(pod("a", nil))})
		w.p.deps.NodeClasses = &fakeResolver{res: map[string]nodeclass.Resolution{
			"default": {Status: notReadyStatus("no subnet matches subnetSelectorTerms")}}}
		rec := &recordedEvents{}
		w.p.deps.Events = rec
		_, err := w.p.Run(context.Background(), "run-1")
		require.NoError(t, err)
		got := rec.of(kube.ReasonNodeClassNotReady)
		require.Len(t, got, 1)
		e := got["NodePool/default"]
		assert.Equal(t, corev1.EventTypeWarning, e.Type)
		assert.Contains(t, e.Message, "NodePool default launches nothing")
		assert.Contains(t, e.Message, "EC2NodeClass default is not ready: no subnet matches subnetSelectorTerms")
	})
	t.Run("resolution failed", func(t *testing.T) {
		w := newTestProvisioner(t, fakeCluster{snap: pendingSnapshot(pod("a", nil))})
		w.p.deps.NodeClasses = &fakeResolver{err: errors.New("throttled")}
		rec := &recordedEvents{}
		w.p.deps.Events = rec
		_, err := w.p.Run(context.Background(), "run-1")
		require.NoError(t, err)
		assert.Empty(t, rec.of(kube.ReasonNodeClassNotReady))
	})
}

// notReadyStatus is a resolution status whose Ready condition is False with message.
func notReadyStatus(message string) apis.EC2NodeClassStatus {
	return apis.EC2NodeClassStatus{Conditions: []metav1.Condition{{Type: nodeclass.ConditionTypeReady, Status: metav1.ConditionFalse,
		Reason: "SubnetsNotFound", Message: message}}}
}

// A NodePool whose requirements no instance type meets gets NoCompatibleInstanceTypes, as Karpenter's
// scheduler publishes it on the NodePool; the pool that launches does not.
func TestIncompatibleNodePoolPublishesNoCompatibleInstanceTypes(t *testing.T) {
	w := newTestProvisioner(t, fakeCluster{snap: pendingSnapshot(pod("a", nil))})
	_, err := w.store.ApplyConfig(context.Background(), storedConfig(t, `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: graviton}
spec:
  template:
    spec:
      requirements:
        - {key: kubernetes.io/arch, operator: In, values: [arm64]}
`+nodeClassRef), false)
	require.NoError(t, err)
	rec := &recordedEvents{}
	w.p.deps.Events = rec
	rep, err := w.p.Run(context.Background(), "run-1")
	require.NoError(t, err)
	require.Len(t, rep.Claims, 1)
	got := rec.of(kube.ReasonNoCompatibleInstanceTypes)
	require.Len(t, got, 1, "%+v", got)
	e := got["NodePool/graviton"]
	assert.Equal(t, corev1.EventTypeWarning, e.Type)
	assert.Contains(t, e.Message, "NodePool graviton can launch nothing")
}
