package drain

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

type podOpt func(*corev1.Pod)

func pod(name string, opts ...podOpt) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Annotations: map[string]string{}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	for _, o := range opts {
		o(p)
	}
	return p
}

func daemon(p *corev1.Pod) {
	p.OwnerReferences = []metav1.OwnerReference{{Kind: "DaemonSet", Name: "ds", APIVersion: "apps/v1"}}
}
func critical(p *corev1.Pod)       { p.Spec.PriorityClassName = "system-node-critical" }
func doNotDisruptOn(p *corev1.Pod) { p.Annotations[DoNotDisruptAnnotation] = "true" }
func grace(s int64) podOpt         { return func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = &s } }
func phase(ph corev1.PodPhase) podOpt {
	return func(p *corev1.Pod) { p.Status.Phase = ph }
}
func terminatingSince(d time.Duration, graceSeconds int64) podOpt {
	return func(p *corev1.Pod) {
		ts := metav1.NewTime(t0.Add(-d))
		p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &ts, &graceSeconds
	}
}

func actions(p Plan) map[string]Action {
	out := map[string]Action{}
	for _, d := range p.Decisions {
		out[d.Pod.Name] = d.Action
	}
	return out
}

func TestTiersEvictInOrder(t *testing.T) {
	pods := []*corev1.Pod{pod("web"), pod("logs", daemon), pod("dns", critical), pod("cni", daemon, critical)}
	cases := []struct {
		name string
		pods []*corev1.Pod
		want map[string]Action
	}{
		{"all tiers present: only non-critical pods go first", pods,
			map[string]Action{"web": Evict, "logs": Wait, "dns": Wait, "cni": Wait}},
		{"then non-critical daemons", pods[1:], map[string]Action{"logs": Evict, "dns": Wait, "cni": Wait}},
		{"then critical pods", pods[2:], map[string]Action{"dns": Evict, "cni": Wait}},
		{"critical daemons last", pods[3:], map[string]Action{"cni": Evict}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := Of(Input{Pods: tc.pods, Now: t0})
			assert.Equal(t, tc.want, actions(p))
			assert.False(t, p.Drained)
		})
	}
}

func TestWhatNeedsNoDraining(t *testing.T) {
	tolerant := pod("tolerates-everything", func(p *corev1.Pod) { p.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}} })
	mirror := pod("static", func(p *corev1.Pod) { p.Annotations[corev1.MirrorPodAnnotationKey] = "x" })
	p := Of(Input{Now: t0, Pods: []*corev1.Pod{
		pod("done", phase(corev1.PodSucceeded)), pod("crashed", phase(corev1.PodFailed)), mirror, tolerant,
		pod("stuck", terminatingSince(5*time.Minute, 30)),
	}})
	assert.True(t, p.Drained, "finished, mirror, tolerating and stuck-terminating pods do not hold a drain")
	assert.Empty(t, p.Decisions)
}

func TestTerminatingPodsAreWaitedForNotEvictedAgain(t *testing.T) {
	p := Of(Input{Now: t0, Pods: []*corev1.Pod{pod("leaving", terminatingSince(10*time.Second, 30)), pod("logs", daemon)}})
	assert.Equal(t, map[string]Action{"leaving": Wait, "logs": Evict}, actions(p),
		"a terminating pod is not evicted again and does not hold back the next tier")
	assert.False(t, p.Drained)
}

func TestDoNotDisruptHoldsUntilTheDeadline(t *testing.T) {
	deadline := t0.Add(10 * time.Minute)
	guarded := pod("batch", doNotDisruptOn, grace(60))
	p := Of(Input{Now: t0, Deadline: &deadline, Pods: []*corev1.Pod{guarded, pod("web")}})
	assert.Equal(t, map[string]Action{"batch": Wait, "web": Evict}, actions(p))
	assert.Equal(t, deadline.Add(-60*time.Second), p.NextDeadlineDelete, "come back when the first deletion is due")

	// Without a deadline it holds forever.
	p = Of(Input{Now: t0.Add(24 * time.Hour), Pods: []*corev1.Pod{guarded}})
	assert.Equal(t, Wait, p.Decisions[0].Action)
	assert.True(t, p.NextDeadlineDelete.IsZero())

	// At deadline − terminationGracePeriodSeconds it is deleted with the time that is left.
	p = Of(Input{Now: deadline.Add(-45 * time.Second), Deadline: &deadline, Pods: []*corev1.Pod{guarded}})
	require.Len(t, p.Decisions, 1)
	assert.Equal(t, Delete, p.Decisions[0].Action)
	assert.Equal(t, 45*time.Second, p.Decisions[0].GracePeriod)
}

func TestDeadlineGraceIsClampedToAtLeastOneSecond(t *testing.T) {
	deadline := t0
	p := Of(Input{Now: t0.Add(time.Minute), Deadline: &deadline, Pods: []*corev1.Pod{pod("late", grace(600)), pod("default-grace")}})
	for _, d := range p.Decisions {
		assert.Equal(t, Delete, d.Action, d.Pod.Name)
		assert.Equal(t, time.Second, d.GracePeriod, "%s: past the deadline the grace is 1 s", d.Pod.Name)
	}
}

func TestDeadlineDeletesBypassTiers(t *testing.T) {
	deadline := t0.Add(20 * time.Second)
	p := Of(Input{Now: t0, Deadline: &deadline, Pods: []*corev1.Pod{pod("web", grace(10)), pod("cni", daemon, critical)}})
	assert.Equal(t, map[string]Action{"web": Evict, "cni": Delete}, actions(p),
		"the critical daemon's 30 s grace no longer fits before the deadline, whatever its tier")
	assert.Equal(t, 20*time.Second, p.Decisions[1].GracePeriod)
}

// The duration form of do-not-disrupt holds a pod for that long after it started, then lets it be
// evicted; a value that is neither "true" nor a duration protects nothing and is reported.
func TestDoNotDisruptDurationAndInvalidValues(t *testing.T) {
	annotate := func(v string, startedAgo time.Duration) podOpt {
		return func(p *corev1.Pod) {
			p.Annotations[DoNotDisruptAnnotation] = v
			st := metav1.NewTime(t0.Add(-startedAgo))
			p.Status.StartTime = &st
		}
	}
	plan := Of(Input{Now: t0, Pods: []*corev1.Pod{
		pod("young", annotate("30m", 10*time.Minute)),
		pod("old", annotate("30m", 45*time.Minute)),
		pod("typo", annotate("ture", time.Hour)),
	}})
	assert.Equal(t, map[string]Action{"young": Wait, "old": Evict, "typo": Evict}, actions(plan))
	require.Len(t, plan.Invalid, 1)
	assert.Equal(t, "typo", plan.Invalid[0].Pod.Name)
	assert.Contains(t, plan.Invalid[0].Reason, `"ture"`)
	require.Len(t, plan.Timed, 2, "both duration-protected pods are named, for their DoNotDisrupt Events")
	assert.Equal(t, "young", plan.Timed[0].Pod.Name)
	assert.True(t, plan.Timed[0].Held)
	assert.Equal(t, t0.Add(20*time.Minute), plan.Timed[0].Until)
	assert.Equal(t, "old", plan.Timed[1].Pod.Name)
	assert.False(t, plan.Timed[1].Held)
	assert.Equal(t, t0.Add(-15*time.Minute), plan.Timed[1].Until)
}
