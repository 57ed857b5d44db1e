package provisioning

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// FailedSchedulingInterval is how often a pod that still cannot be provisioned, for the same reason, is
// recorded again (decision record and FailedScheduling Event). Every trigger and the one-minute backstop
// solve it again; writing the same verdict each time would cost a DynamoDB write per pod per run — with
// thousands of pods over a NodePool's limit, millions a day — and tell the operator nothing new. A pod
// whose reason changes is recorded at once.
const FailedSchedulingInterval = 10 * time.Minute

// failureMemo remembers, for the life of a warm function instance, what was last recorded for each pod
// that cannot be provisioned. A cold start forgets and records once more, which is harmless.
type failureMemo struct {
	mu   sync.Mutex
	seen map[string]recordedFailure
}

type recordedFailure struct {
	reason string
	at     time.Time
}

// due keeps the failures that were not recorded with the same reason within FailedSchedulingInterval, and
// remembers them as recorded now. It forgets pods not seen for twice the interval.
func (m *failureMemo) due(failures []scheduling.PodFailure, now time.Time) []scheduling.PodFailure {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seen == nil {
		m.seen = map[string]recordedFailure{}
	}
	for k, r := range m.seen {
		if now.Sub(r.at) > 2*FailedSchedulingInterval {
			delete(m.seen, k)
		}
	}
	var out []scheduling.PodFailure
	for _, f := range failures {
		key := failureKey(f)
		last, ok := m.seen[key]
		if ok && last.reason == f.Reason && now.Sub(last.at) < FailedSchedulingInterval {
			continue
		}
		m.seen[key] = recordedFailure{reason: f.Reason, at: now}
		out = append(out, f)
	}
	return out
}

// forget drops what due remembered for failures that could not be recorded after all, so the next run
// tries again.
func (m *failureMemo) forget(failures []scheduling.PodFailure) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, f := range failures {
		delete(m.seen, failureKey(f))
	}
}

// failureKey names a pod for failureMemo: a pod recreated under the same name is another pod.
func failureKey(f scheduling.PodFailure) string {
	if f.Pod == nil {
		return f.PodName
	}
	return f.PodName + "/" + string(f.Pod.UID)
}

// maxPodRecords caps the pods given a decision record (and a FailedScheduling Event) of their own in one
// run, newest first: 500 records are 20 BatchWriteItem calls, five round trips with decisionWriters at
// four, which fit recordBudget with room for retries of throttled items. An operator asking about a pod
// usually asks about a recent one; every pod past the cap is still counted, with its reason, in the
// run's summaries (state.UnschedulableSubject), which `nodewright explain` shows for a pod with no
// record of its own.
const maxPodRecords = 500

// maxRecordBudget is the longest a run spends recording why pods cannot be provisioned; the run's
// deadline may leave less (recordBudget).
const maxRecordBudget = 5 * time.Second

// recordUnschedulable tells the operator and the pods why they cannot be provisioned, for the pods whose
// verdict is new: a summary record per reason (how many pods, a sample of their names), a decision record
// and a FailedScheduling Event for each of the newest maxPodRecords. It runs after the launches, so
// thousands of such pods never delay capacity for the others, and writes concurrently within a budget
// taken from the run's deadline (recordBudget), its Events included; what does not fit is recorded by a
// later run.
func (p *Provisioner) recordUnschedulable(ctx context.Context, runID string, failures []scheduling.PodFailure, rep *Report) {
	if len(failures) == 0 {
		return
	}
	for _, f := range failures {
		rep.Unschedulable = append(rep.Unschedulable, UnschedulablePod{Pod: f.PodName, Reason: f.Reason})
	}
	if deadline, ok := ctx.Deadline(); ok && deadline.Sub(p.deps.Now()) < p.cfg.LaunchMargin {
		rep.Errors = append(rep.Errors, fmt.Sprintf("%d pods that cannot be provisioned are recorded by a later run: the deadline is near", len(failures)))
		return
	}
	now := p.deps.Now()
	due := p.failures.due(failures, now)
	if len(due) == 0 {
		return
	}
	newestFirst(due)
	own := due[:min(len(due), maxPodRecords)]
	ds := unschedulableSummaries(runID, failures, due, now)
	for _, f := range own {
		ds = append(ds, state.Decision{Subject: "pod/" + f.PodName, ID: runID, Kind: "CannotProvision", Reason: "FailedScheduling",
			Message: f.Reason})
	}
	wctx, cancel := context.WithTimeout(ctx, p.recordBudget(ctx))
	defer cancel()
	if err := p.deps.Store.RecordDecisions(wctx, ds); err != nil {
		p.failures.forget(due)
		rep.Errors = append(rep.Errors, fmt.Sprintf("recording why %d pods cannot be provisioned: %v", len(due), err))
	}
	// The Events share the budget: a run never waits past it for them (a client's rate limit can hold
	// each write); the pods it did not reach are told by a later run.
	var evs []kube.Event
	for _, f := range own {
		if e, ok := explanation(f); ok {
			evs = append(evs, e)
		}
	}
	p.publishAll(wctx, evs, rep)
}

// recordBudget is how long recordUnschedulable may write: maxRecordBudget, or less when the run's
// deadline is nearer, so the writes end half a LaunchMargin before it and the run can still report and
// release its lease.
func (p *Provisioner) recordBudget(ctx context.Context) time.Duration {
	budget := maxRecordBudget
	if deadline, ok := ctx.Deadline(); ok {
		budget = min(budget, deadline.Sub(p.deps.Now())-p.cfg.LaunchMargin/2)
	}
	return budget
}
