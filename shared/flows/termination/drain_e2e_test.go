package termination

import (
	"context"
	"fmt"

	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/drain"
)

// replicaSet creates a ReplicaSet of n pods pinned to the world's Node.
func (w *world) replicaSet(name string, n int32, grace int64) {
	labels := map[string]string{"app": name}
	_, err := w.kube.AppsV1().ReplicaSets(w.ns).Create(w.ctx, &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.ReplicaSetSpec{Replicas: &n, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: w.podSpec(grace)}},
	}, metav1.CreateOptions{})
	require.NoError(w.t, err)
}

// daemonPod creates a pod owned by a DaemonSet (one that runs nowhere, so its controller leaves the pod
// alone while the garbage collector still sees a live owner), as a DaemonSet's pod looks to a drain.
func (w *world) daemonPod(name, priorityClass string) string {
	ds, err := w.kube.AppsV1().DaemonSets(w.ns).Create(w.ctx, &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-owner"},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"ds": name + "-owner"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"ds": name + "-owner"}},
				Spec: corev1.PodSpec{NodeSelector: map[string]string{"nowhere": "true"}, Containers: w.podSpec(1).Containers}}},
	}, metav1.CreateOptions{})
	require.NoError(w.t, err)
	spec := w.podSpec(1)
	spec.PriorityClassName = priorityClass
	return w.createPod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": name},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: ds.Name, UID: ds.UID}}},
		Spec: spec})
}

func (w *world) pdb(name string, maxUnavailable intstr.IntOrString) {
	_, err := w.kube.PolicyV1().PodDisruptionBudgets(w.ns).Create(w.ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &maxUnavailable,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}},
	}, metav1.CreateOptions{})
	require.NoError(w.t, err)
	require.Eventually(w.t, func() bool {
		p, err := w.kube.PolicyV1().PodDisruptionBudgets(w.ns).Get(w.ctx, name, metav1.GetOptions{})
		return err == nil && p.Status.ObservedGeneration == p.Generation && p.Status.ExpectedPods > 0 &&
			p.Status.CurrentHealthy == p.Status.ExpectedPods
	}, time.Minute, 100*time.Millisecond, "PDB %s status from kube-controller-manager", name)
}

func (w *world) nodeGone() bool {
	_, err := w.kube.CoreV1().Nodes().Get(w.ctx, w.node, metav1.GetOptions{})
	return apierrors.IsNotFound(err)
}

func TestDrainsInTiersThenTerminates(t *testing.T) {
	w := newWorld(t, worldOptions{})
	w.replicaSet("web", 2, 1)
	logs := w.daemonPod("logs", "")
	dns := w.daemonPod("dns", "system-node-critical")
	w.waitReady(4)
	require.NoError(t, w.store.ReserveDisruption(w.ctx, "default", w.claim, 1), "the disruption holds a budget slot")

	w.request("Drifted", nil)
	w.pumpUntil(90*time.Second, "the claim to be deleted", func() bool { return w.claimIs(state.Deleted) })

	order, _ := w.kubelet.left()
	require.Len(t, order, 4, "every pod left the node: %v", order)
	assert.True(t, strings.HasPrefix(order[0], "web-") && strings.HasPrefix(order[1], "web-"), "non-critical pods first: %v", order)
	assert.Equal(t, []string{logs, dns}, order[2:], "then the DaemonSet's pod, then the critical one: %v", order)

	assert.Equal(t, "terminated", w.instanceState())
	assert.True(t, w.nodeGone(), "the Node is deleted")
	c, err := w.store.GetClaim(w.ctx, w.claim)
	require.NoError(t, err)
	assert.Equal(t, "Drifted", c.DisruptionReason)
	assert.NotNil(t, c.DrainingAt)
	assert.NotNil(t, c.TerminatingAt)
	assert.NotNil(t, c.DeletedAt)
	assert.Equal(t, []string{"Draining", "Drained", "Terminating", "Deleted"}, w.decisionKinds())
	assert.Contains(t, w.eventReasons(w.ns, logs), "Evicted")
	inFlight, err := w.store.DisruptionsInFlight(w.ctx, "default")
	require.NoError(t, err)
	assert.Zero(t, inFlight, "the budget slot is given back once the node is gone")
	assert.Equal(t, 0, w.pumpFor(1500*time.Millisecond), "nothing is re-driven once the claim is deleted")

	// What the function's metrics report.
	assert.Equal(t, map[string]int{"default": 1}, w.stats.Drained, "the Node is counted drained once")
	if assert.Len(t, w.stats.Terminated, 1) {
		assert.Equal(t, "default", w.stats.Terminated[0].NodePool)
		assert.Positive(t, w.stats.Terminated[0].Took)
		assert.Equal(t, "us-east-1a", w.stats.Terminated[0].Zone)
		assert.True(t, w.stats.Terminated[0].Node, "the claim had a Node: nodes_terminated_total and its lifetime count it")
		assert.Positive(t, w.stats.Terminated[0].Lifetime)
	}
	assert.Equal(t, map[string]int{"Drifted": 4}, w.stats.PodsDrained)
	assert.Equal(t, 4, w.stats.Evictions["200"], "every pod evicted once: %v", w.stats.Evictions)
	assert.Positive(t, w.stats.Redriven)
}

func TestPDBBlocksUntilRelaxed(t *testing.T) {
	w := newWorld(t, worldOptions{})
	w.replicaSet("web", 2, 1)
	w.waitReady(2)
	w.pdb("web", intstr.FromInt32(0))

	w.request("Underutilized", nil)
	handled := w.pumpFor(6 * time.Second)
	assert.GreaterOrEqual(t, handled, 2, "the blocked request is re-driven, not dropped")
	assert.True(t, w.claimIs(state.Draining))
	node, err := w.kube.CoreV1().Nodes().Get(w.ctx, w.node, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Contains(t, node.Spec.Taints, corev1.Taint{Key: drain.DisruptedTaintKey, Effect: corev1.TaintEffectNoSchedule})
	assert.Equal(t, "true", node.Labels[ExcludeFromLoadBalancersLabel])
	order, _ := w.kubelet.left()
	assert.Empty(t, order, "no pod is evicted while the budget allows none")
	assert.Contains(t, w.eventReasons("default", w.node), "FailedDraining")
	assert.Equal(t, "running", w.instanceState())
	assert.Contains(t, w.decisionKinds(), "DrainBlocked")
	assert.Positive(t, w.stats.Evictions["429"], "the budget's refusals are counted by their code")
	assert.Empty(t, w.stats.PodsDrained)

	_, err = w.kube.PolicyV1().PodDisruptionBudgets(w.ns).Patch(w.ctx, "web", types.MergePatchType,
		[]byte(`{"spec":{"maxUnavailable":"100%"}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	w.pumpUntil(90*time.Second, "the claim to be deleted once the budget allows", func() bool { return w.claimIs(state.Deleted) })
	order, _ = w.kubelet.left()
	assert.Len(t, order, 2)
	assert.Equal(t, "terminated", w.instanceState())
	assert.True(t, w.nodeGone())
}

func TestDoNotDisruptWaitsForTheGracePeriod(t *testing.T) {
	w := newWorld(t, worldOptions{grace: "12s"})
	w.replicaSet("web", 1, 1)
	guarded := w.createPod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "batch",
		Annotations: map[string]string{drain.DoNotDisruptAnnotation: "true"}}, Spec: w.podSpec(4)})
	w.waitReady(2)

	w.request("Expired", nil)
	w.pumpUntil(90*time.Second, "the claim to be deleted", func() bool { return w.claimIs(state.Deleted) })

	c, err := w.store.GetClaim(w.ctx, w.claim)
	require.NoError(t, err)
	order, at := w.kubelet.left()
	require.Len(t, order, 2)
	assert.True(t, strings.HasPrefix(order[0], "web-"), "the ordinary pod is evicted at once: %v", order)
	due := c.DrainingAt.Add(12*time.Second - 4*time.Second) // deadline − the pod's terminationGracePeriodSeconds
	assert.False(t, at[guarded].Before(due.Add(-time.Second)), "the do-not-disrupt pod is held until %s, went at %s", due, at[guarded])
	assert.True(t, at[guarded].Before(c.DrainingAt.Add(12*time.Second)), "and is gone by the deadline")
	assert.Contains(t, w.eventReasons(w.ns, guarded), "Disrupted")
	assert.Contains(t, w.eventReasons("default", w.node), "TerminationGracePeriodExpiring")
	assert.Equal(t, "terminated", w.instanceState())
}

// A do-not-disrupt value that is neither "true" nor a duration protects nothing: the pod is evicted
// like any other and gets an InvalidDoNotDisruptAnnotation Event saying why, as Karpenter does.
func TestInvalidDoNotDisruptIsEvictedWithAnEvent(t *testing.T) {
	w := newWorld(t, worldOptions{grace: "1h"})
	typo := w.createPod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "batch",
		Annotations: map[string]string{drain.DoNotDisruptAnnotation: "ture"}}, Spec: w.podSpec(4)})
	w.waitReady(1)

	w.request("Drifted", nil)
	w.pumpUntil(90*time.Second, "the claim to be deleted", func() bool { return w.claimIs(state.Deleted) })
	order, _ := w.kubelet.left()
	assert.Equal(t, []string{typo}, order)
	assert.Contains(t, w.eventReasons(w.ns, typo), "InvalidDoNotDisruptAnnotation")
	assert.Contains(t, w.eventReasons(w.ns, typo), "Evicted")
}

// A do-not-disrupt duration that has ended protects nothing any more: the pod is evicted and told why
// with DoNotDisruptGracePeriodElapsed, as Karpenter does.
func TestEndedDoNotDisruptDurationIsEvictedWithAnEvent(t *testing.T) {
	w := newWorld(t, worldOptions{grace: "1h"})
	short := w.createPod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "batch",
		Annotations: map[string]string{drain.DoNotDisruptAnnotation: "1s"}}, Spec: w.podSpec(4)})
	w.waitReady(1)
	time.Sleep(1500 * time.Millisecond) // the pod's protection ends a second after it started

	w.request("Drifted", nil)
	w.pumpUntil(90*time.Second, "the claim to be deleted", func() bool { return w.claimIs(state.Deleted) })
	order, _ := w.kubelet.left()
	assert.Equal(t, []string{short}, order)
	assert.Contains(t, w.eventReasons(w.ns, short), "DoNotDisruptGracePeriodElapsed")
	assert.Contains(t, w.eventReasons(w.ns, short), "Evicted")
}

func TestSpotDeadlineBeatsBudgetsAndDoNotDisrupt(t *testing.T) {
	w := newWorld(t, worldOptions{grace: "1h"})
	w.replicaSet("web", 1, 4)
	guarded := w.createPod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "batch",
		Annotations: map[string]string{drain.DoNotDisruptAnnotation: "true"}}, Spec: w.podSpec(4)})
	w.waitReady(2)
	w.pdb("web", intstr.FromInt32(0))

	deadline := time.Now().Add(14 * time.Second).UTC()
	w.request("Interrupted", &deadline)
	w.pumpUntil(60*time.Second, "the claim to be deleted", func() bool { return w.claimIs(state.Deleted) })

	order, at := w.kubelet.left()
	require.Len(t, order, 2, "both the budgeted and the do-not-disrupt pod are deleted: %v", order)
	for _, name := range order {
		assert.True(t, at[name].Before(deadline), "%s went at %s, before the deadline %s", name, at[name], deadline)
		assert.False(t, at[name].Before(deadline.Add(-4*time.Second-time.Second)), "%s is held until deadline − its grace", name)
	}
	assert.Contains(t, w.eventReasons(w.ns, guarded), "Disrupted")
	assert.Equal(t, "terminated", w.instanceState())
	assert.True(t, w.nodeGone())
}

// failingEvictions fails the first n evictions as the API server being unavailable would.
type failingEvictions struct {
	Actions
	n int
}

func (f *failingEvictions) Evict(ctx context.Context, ref kube.PodRef) (kube.EvictionResult, error) {
	if f.n > 0 {
		f.n--
		return kube.EvictionResult{}, fmt.Errorf("evicting pod %s: %w", ref, kube.ErrUnavailable)
	}
	return f.Actions.Evict(ctx, ref)
}

func TestFailedEvictionIsRedrivenAndConverges(t *testing.T) {
	w := newWorld(t, worldOptions{actions: func(a Actions) Actions { return &failingEvictions{Actions: a, n: 1} }})
	w.replicaSet("web", 1, 1)
	w.waitReady(1)

	w.request("Drifted", nil)
	var ev events.SQSEvent
	var resp events.SQSEventResponse
	require.Eventually(t, func() bool { ev, resp = w.pumpOnce(); return len(ev.Records) > 0 }, 10*time.Second, 10*time.Millisecond)
	assert.Empty(t, resp.BatchItemFailures, "the failed eviction blocks the drain; the message is not left to SQS")
	assert.Equal(t, 1, w.stats.Redriven, "it is re-driven instead")
	assert.True(t, w.claimIs(state.Draining))
	node, err := w.kube.CoreV1().Nodes().Get(w.ctx, w.node, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Contains(t, node.Spec.Taints, corev1.Taint{Key: drain.DisruptedTaintKey, Effect: corev1.TaintEffectNoSchedule})

	w.pumpUntil(60*time.Second, "the re-driven request to finish the job", func() bool { return w.claimIs(state.Deleted) })
	assert.Equal(t, "terminated", w.instanceState())
	assert.True(t, w.nodeGone())
	assert.Equal(t, []string{"Draining", "DrainBlocked", "Drained", "Terminating", "Deleted"}, w.decisionKinds(),
		"the re-drive does not repeat the draining step")
	assert.Equal(t, 1, w.stats.Evictions["error"])
}

func TestRequestForDeletedClaimDoesNothing(t *testing.T) {
	w := newWorld(t, worldOptions{})
	w.replicaSet("web", 1, 1)
	w.waitReady(1)
	_, err := w.store.UpdateClaim(w.ctx, w.claim, func(c *state.Claim) error { c.Lifecycle = state.Deleted; return nil })
	require.NoError(t, err)

	w.request("Drifted", nil)
	var resp events.SQSEventResponse
	var ev events.SQSEvent
	require.Eventually(t, func() bool { ev, resp = w.pumpOnce(); return len(ev.Records) > 0 }, 10*time.Second, 10*time.Millisecond)
	assert.Empty(t, resp.BatchItemFailures)
	assert.Equal(t, 0, w.pumpFor(1500*time.Millisecond), "acknowledged, not re-driven")

	node, err := w.kube.CoreV1().Nodes().Get(w.ctx, w.node, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Empty(t, node.Spec.Taints, "the Node is not touched")
	order, _ := w.kubelet.left()
	assert.Empty(t, order)
	assert.Equal(t, "running", w.instanceState())
	assert.Empty(t, w.decisionKinds())
}
