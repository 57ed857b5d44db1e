package provisioning

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

func TestFailureMemoRecordsNewVerdictsOnly(t *testing.T) {
	var m failureMemo
	t0 := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	pod := func(uid string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: k8stypes.UID("uid-" + uid)}}
	}
	a := scheduling.PodFailure{PodName: "ns/a", Pod: pod("a"), Reason: "nodepool default: limit cpu reached"}
	b := scheduling.PodFailure{PodName: "ns/b", Pod: pod("b"), Reason: "no instance type has 64 CPU"}

	assert.Len(t, m.due([]scheduling.PodFailure{a, b}, t0), 2, "first sight: both recorded")
	assert.Empty(t, m.due([]scheduling.PodFailure{a, b}, t0.Add(time.Minute)), "same verdicts a minute later: nothing")

	changed := a
	changed.Reason = "nodepool default: limit memory reached"
	assert.Equal(t, []scheduling.PodFailure{changed}, m.due([]scheduling.PodFailure{changed, b}, t0.Add(2*time.Minute)),
		"a changed reason is recorded at once")

	recreated := b
	recreated.Pod = pod("b2")
	assert.Equal(t, []scheduling.PodFailure{recreated}, m.due([]scheduling.PodFailure{recreated}, t0.Add(3*time.Minute)),
		"a new pod with the same name is a new pod")

	later := t0.Add(2*time.Minute + FailedSchedulingInterval)
	assert.Len(t, m.due([]scheduling.PodFailure{changed, recreated}, later), 1, "after the interval the verdict is recorded again")

	m.forget([]scheduling.PodFailure{recreated})
	assert.Len(t, m.due([]scheduling.PodFailure{recreated}, later), 1, "a write that failed is tried again next run")

	m.due(nil, later.Add(3*FailedSchedulingInterval))
	assert.Empty(t, m.seen, "pods not seen for long are forgotten")
}

// TestAFiftyThousandPodBacklogWritesABoundedNumberOfRecords: a NodePool at its limit with 50,000 pending
// pods used to cost one record per pod (2,000 BatchWriteItem calls, past any deadline). A run now writes
// the newest maxPodRecords pods' own records and one summary per reason counting them all, and the next
// run, with nothing new, writes nothing.
func TestAFiftyThousandPodBacklogWritesABoundedNumberOfRecords(t *testing.T) {
	ctx := context.Background()
	w := newTestProvisioner(t, fakeCluster{})
	cs := &countingStore{Store: w.store}
	w.p.deps.Store = cs
	t0 := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	const backlog = 50_000
	failures := make([]scheduling.PodFailure, 0, backlog)
	for i := range backlog {
		reason := "nodepool default: limit cpu reached"
		if i%5 == 0 {
			reason = "no instance type has 64 CPU"
		}
		failures = append(failures, scheduling.PodFailure{PodName: fmt.Sprintf("shop/web-%05d", i), Reason: reason,
			Pod: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: fmt.Sprintf("web-%05d", i),
				UID: k8stypes.UID(fmt.Sprint("uid-", i)), CreationTimestamp: metav1.NewTime(t0.Add(time.Duration(i) * time.Second))}}})
	}

	var rep Report
	w.p.recordUnschedulable(ctx, "run-1", failures, &rep)
	assert.Empty(t, rep.Errors)
	assert.Len(t, rep.Unschedulable, backlog, "the report still names every pod")
	assert.Equal(t, 1, cs.decisionSet, "one RecordDecisions call")
	assert.Equal(t, maxPodRecords+2, cs.decisionItems, "the newest pods' own records and a summary per reason")

	newest, err := w.store.Decisions(ctx, "pod/shop/web-49999", 1)
	require.NoError(t, err)
	assert.Len(t, newest, 1, "the newest pod has its own record")
	oldest, err := w.store.Decisions(ctx, "pod/shop/web-00000", 1)
	require.NoError(t, err)
	assert.Empty(t, oldest, "past the cap a pod is only counted")
	summaries, err := w.store.Decisions(ctx, state.UnschedulableSubject, 10)
	require.NoError(t, err)
	var messages []string
	for _, d := range summaries {
		messages = append(messages, d.Message)
		assert.Len(t, strings.Fields(d.Details["sample"]), summarySample, "a bounded sample of names")
	}
	assert.ElementsMatch(t, []string{"40,000 pods: nodepool default: limit cpu reached", "10,000 pods: no instance type has 64 CPU"}, messages)

	w.p.recordUnschedulable(ctx, "run-2", failures, &rep)
	assert.Equal(t, 1, cs.decisionSet, "nothing new: nothing written")
}

func TestSummariesFoldTheRarestReasons(t *testing.T) {
	var failures []scheduling.PodFailure
	for i := range maxSummaries + 5 {
		for j := 0; j <= i; j++ {
			failures = append(failures, scheduling.PodFailure{PodName: fmt.Sprintf("ns/p%d-%d", i, j), Reason: fmt.Sprintf("reason %d", i)})
		}
	}
	ds := unschedulableSummaries("run", failures, failures, time.Now())
	require.Len(t, ds, maxSummaries)
	assert.Equal(t, fmt.Sprintf("%d pods: reason %d", maxSummaries+5, maxSummaries+4), ds[0].Message, "most common first")
	assert.Equal(t, "21 pods: 6 other reasons", ds[maxSummaries-1].Message)
	assert.Equal(t, "1,412", thousands(1412))
	assert.Equal(t, "150,000", thousands(150000))
	assert.Equal(t, "999", thousands(999))
}

func TestRecordBudgetEndsBeforeTheDeadline(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	p := New(Config{}, Dependencies{Now: func() time.Time { return now }})
	assert.Equal(t, maxRecordBudget, p.recordBudget(context.Background()))
	ctx, cancel := context.WithDeadline(context.Background(), now.Add(DefaultLaunchMargin/2+2*time.Second))
	defer cancel()
	assert.Equal(t, 2*time.Second, p.recordBudget(ctx), "half a launch margin is left before the deadline")
}

// waitingEvents blocks each Publish until its context ends, as a client whose rate limiter is spent does.
type waitingEvents struct{ calls atomic.Int32 }

func (e *waitingEvents) Publish(ctx context.Context, _ kube.Event) (bool, error) {
	e.calls.Add(1)
	<-ctx.Done()
	return false, ctx.Err()
}

// TestEventsForUnschedulablePodsStayInsideTheRecordBudget: the FailedScheduling Events a run writes for
// pods it cannot provision share the record budget. Before, they were written on the run's own context:
// behind a spent client rate limit a run of 500 such pods waited out its deadline and reported an error per
// pod.
func TestEventsForUnschedulablePodsStayInsideTheRecordBudget(t *testing.T) {
	w := newTestProvisioner(t, fakeCluster{})
	events := &waitingEvents{}
	w.p.deps.Events = events
	w.p.cfg.LaunchMargin = time.Second
	var failures []scheduling.PodFailure
	for i := range 20 {
		failures = append(failures, scheduling.PodFailure{PodName: fmt.Sprintf("shop/web-%d", i), Reason: "no NodePool offers the label",
			Pod: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: fmt.Sprintf("web-%d", i), UID: k8stypes.UID(fmt.Sprint("uid-", i))}}})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var rep Report
	w.p.recordUnschedulable(ctx, "run-1", failures, &rep)
	assert.Empty(t, rep.Errors, "an Event cut off by the budget is not a failure")
	assert.Equal(t, int32(maxEventWrites), events.calls.Load(),
		"the writes in flight when the budget ran out are cut off; the pods after them are told by a later run")
	assert.NoError(t, ctx.Err(), "the run's own deadline was not reached")
}

// TestNoUnschedulablePodsNearTheDeadlineIsNoError: a run that ends near its deadline with every pod served
// reported "0 pods that cannot be provisioned are recorded by a later run" as an error (seen in the burst
// scenario).
func TestNoUnschedulablePodsNearTheDeadlineIsNoError(t *testing.T) {
	w := newTestProvisioner(t, fakeCluster{})
	ctx, cancel := context.WithTimeout(context.Background(), w.p.cfg.LaunchMargin/2)
	defer cancel()
	var rep Report
	w.p.recordUnschedulable(ctx, "run-1", nil, &rep)
	assert.Empty(t, rep.Errors)
}
