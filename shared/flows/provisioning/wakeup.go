package provisioning

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/nodewright/nodewright/shared/adapters/crash"
	"github.com/nodewright/nodewright/shared/adapters/sqsbatch"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// PodReader reads one pod as the API server has it now; *kube.Snapshotter satisfies it.
type PodReader interface {
	Pod(ctx context.Context, namespace, name string) (*corev1.Pod, error)
}

// PodsRevision is the state-table mark of the API server revision the last complete run's pods were
// listed at.
const PodsRevision = state.ProvisionerPodsRevision

// Timing of Handle's loop.
const (
	// leaseWait is how long Handle waits before looking again while another run holds the lease.
	leaseWait = 500 * time.Millisecond
	// rerunPause separates two runs of one invocation, so a pod status being written settles.
	rerunPause = 200 * time.Millisecond
	// MaxRunsPerBatch bounds the runs that neither launched nor placed new pods (unsatisfied, failed, or
	// finding the lease held: see burstGoesOn) one queue batch gets in one invocation, deadline or not.
	MaxRunsPerBatch = 5
	// MaxRunsPerInvocation bounds every run of one invocation, those of a burst's chain included,
	// deadline or not (the deadline bounds them first in a Lambda: timeForAnotherRun).
	MaxRunsPerInvocation = 100
	// MaxUnsatisfiedReceives bounds how often a batch that could not be satisfied is handed back to SQS:
	// below the provisioning queue's maxReceiveCount (5), so a pod that changes all the time never sends
	// its wake-up to the dead-letter queue; the backstop schedule covers it then.
	MaxUnsatisfiedReceives = 3
)

// Handle runs provisioning for a trigger, or coalesces it into runs that already saw what it is about.
// The schedule always runs once (it is the backstop for anything a message could not say).
//
// A queue batch is satisfied only by completed runs whose snapshots show each pod it names as the pod
// is now (bound, gone, or marked PodScheduled=False at a resourceVersion the snapshot's pod list had
// reached) — not merely by a run that started after the message was sent: kube-scheduler writes the
// FailedScheduling Event that calls the webhook before it stores the pod's Unschedulable status, so a
// snapshot begun after the message may still show the pod without it.
// Messages that name no pod (replacement requests) are satisfied by a complete snapshot begun after they
// were sent. Handle runs again until the batch is satisfied (waiting while another run holds the lease)
// and after a run that launched or placed new pods (burstGoesOn; the batch is checked only once such a
// chain ends, and the chain's runs follow one another under one hold of the lease: leasedRuns), up to
// MaxRunsPerBatch runs that neither launched nor placed new pods (MaxRunsPerInvocation in all) and as
// long as the time left covers another run (timeForAnotherRun); an unsatisfied batch then gives up with
// Unsatisfied set.
// A failed run, or a lease, mark or pod that cannot be read, never satisfies: a spare run costs a solve,
// a missed one costs a pod.
//
// A queue run lets a burst of pending pods finish arriving before its snapshot: kube-scheduler marks a
// scaled-up deployment's pods one by one as the ReplicaSet creates them, and one solve over all of them
// packs better than one per message batch. Holding the lease, the first run waits until the stored
// settings' batchIdleDuration has passed since the newest message was sent (never longer than that, and
// never past batchMaxDuration after the oldest: see quietWait and batchSettings); the schedule, later
// runs and replacement requests (an interruption's clock is running) never wait.
func (p *Provisioner) Handle(ctx context.Context, runID string, t Trigger) (out Outcome) {
	out = Outcome{Trigger: t}
	var after *afterRunJob // what the last run left for after it, done beside the next one
	defer func() { after.finish(&out.Report) }()
	if t.Queue() {
		ok, mark := p.satisfied(ctx, t)
		if ok {
			return Outcome{Trigger: t, Coalesced: true, Mark: mark}
		}
		out.Mark = mark
	}
	quiet := quietWait(t, p.deps.Now(), windowOf(p.batchSettings(ctx, t)))
	out.Waited = quiet
	spare := 0       // runs that neither launched nor placed new pods
	chained := false // the last run showed the burst going on, and another fits: the next follows at once
	for {
		held, notReleased, err := p.leasedRuns(ctx, fmt.Sprintf("%s#%d", runID, out.Runs+1), quiet, func(rep Report, err error) bool {
			out.Runs++
			out.Report, out.Err = rep, err
			after.finish(&out.Report)
			after = p.startAfterRun(ctx, rep)
			out.Launched = append(out.Launched, rep.Claims...)
			out.PlacedInFlight = append(out.PlacedInFlight, rep.PlacedInFlight...)
			out.Timings = append(out.Timings, rep.timing())
			if rep.Capacity != nil {
				out.Capacity = rep.Capacity
			}
			if pe := (*crash.PanicError)(nil); errors.As(err, &pe) {
				out.Panics = append(out.Panics, err)
			}
			// A run that shows the burst going on (it launched, or placed new pods on capacity in flight)
			// does not count against MaxRunsPerBatch: a burst whose pods kube-scheduler marks over fifteen
			// seconds would otherwise end its chain after five runs, and the pods marked after it wait
			// while the queue's backlog of batches already served is checked, seconds.
			if !burstGoesOn(rep) {
				spare++
			}
			// Such a run is followed by another whatever the batch's check would say, so the check (the
			// mark, the revision and up to ten pod reads) is left to the run that ends the chain: made
			// here it only delayed the next run's snapshot, which the pods marked since are waiting for.
			// The next run follows under the same hold of the lease, with no pause: kube-scheduler is
			// marking the burst's pods now.
			chained = t.Queue() && burstGoesOn(rep) && p.moreRuns(ctx, spare, out.Runs)
			return chained
		})
		if held {
			out.Report.LeaseNotReleased = notReleased
		} else {
			out.Runs++
			out.Report, out.Err = Report{}, err
			out.Timings = append(out.Timings, out.Report.timing())
			spare++
			chained = false
		}
		if !t.Queue() {
			return out // a failed scheduled run is the next schedule's to retry
		}
		moreRuns := p.moreRuns(ctx, spare, out.Runs)
		chained = chained && moreRuns // the hold ended at its time limit mid-chain: take the lease again
		// A failed run (an API server or AWS error past the clients' retries) satisfies nothing: it is
		// run again like an unsatisfied one, and the batch handed back if none succeeds, rather than
		// leaving its pods to the backstop a minute later.
		satisfied := false
		if out.Err == nil && !chained {
			satisfied, _ = p.satisfied(ctx, t)
		}
		switch {
		case chained:
		case satisfied:
			return out
		case !moreRuns:
			out.Unsatisfied = true
			return out
		}
		quiet = 0
		pause := rerunPause
		switch {
		case !out.Report.Lease:
			pause = leaseWait
		case chained:
			pause = 0
		}
		if sqsbatchSleep(ctx, pause) != nil {
			out.Unsatisfied = true
			return out
		}
	}
}

// moreRuns reports whether Handle may make another run after runs, spare of which showed no burst: up to
// MaxRunsPerBatch spare ones, MaxRunsPerInvocation in all, and while the time left covers one.
func (p *Provisioner) moreRuns(ctx context.Context, spare, runs int) bool {
	return spare < MaxRunsPerBatch && runs < MaxRunsPerInvocation && p.timeForAnotherRun(ctx)
}

// burstGoesOn reports whether a run shows a burst still arriving: it launched capacity, or it placed
// pods the previous run had not seen on capacity in flight (Report.NewlyPlaced). kube-scheduler marks a
// burst's pods over seconds (a thousand take ten to twenty), so Handle then runs again at once, even when
// its own batch is satisfied: the pods marked since the run's snapshot would otherwise wait until their
// own messages came through the queue, behind every message of the burst that earlier runs already
// served (each such batch costs a check; in the detection scenario, draining them kept pods marked after
// a chain ended waiting 3-5 s). The run that neither launches nor places a new pod ends the chain; one
// that places new pods without launching does not count against MaxRunsPerBatch either.
func burstGoesOn(rep Report) bool { return rep.Lease && (len(rep.Claims) > 0 || rep.NewlyPlaced > 0) }

// satisfied reports whether completed runs already saw what t is about (see Handle), and the snapshot
// mark it read.
func (p *Provisioner) satisfied(ctx context.Context, t Trigger) (bool, time.Time) {
	mark, err := p.deps.Store.Mark(ctx, SnapshotMark)
	if err != nil {
		return false, mark
	}
	seenByTime := func(sent time.Time) bool { return !sent.IsZero() && sent.Before(mark) }
	if t.Others > 0 && !seenByTime(t.NewestOther) {
		return false, mark
	}
	if len(t.Pods) == 0 {
		return true, mark
	}
	var rv uint64
	if p.deps.Pods != nil {
		if rv, err = p.deps.Store.Revision(ctx, PodsRevision); err != nil {
			return false, mark
		}
	}
	if rv == 0 { // no pod reader, or no revision recorded yet: judge the pods by when they were sent
		return seenByTime(t.NewestSent), mark
	}
	return p.podsSeen(ctx, t.Pods, rv), mark
}

// maxPodReads bounds the pod reads one batch's check makes at once: a queue batch names at most ten pods,
// and reading them one after another held the queue consumer for ten API server round trips per batch
// while a burst's runs waited behind it.
const maxPodReads = 10

// podsSeen reports whether a snapshot whose pods were listed at revision rv shows each pod of keys as it
// is now: gone, bound, replaced by another pod of that name, or marked PodScheduled=False at a revision
// rv had reached. The pods are read at once (maxPodReads); the first that was not seen ends the check.
func (p *Provisioner) podsSeen(ctx context.Context, keys []PodKey, rv uint64) bool {
	g, gctx := crash.WithContext(ctx) // the first pod not seen cancels the other reads
	g.SetLimit(maxPodReads)
	notSeen := errors.New("not seen")
	for _, k := range keys {
		g.Go(func() error {
			if !p.podSeen(gctx, k, rv) {
				return notSeen
			}
			return nil
		})
	}
	return g.Wait() == nil
}

// podSeen is podsSeen for one pod.
func (p *Provisioner) podSeen(ctx context.Context, k PodKey, rv uint64) bool {
	pod, err := p.deps.Pods.Pod(ctx, k.Namespace, k.Name)
	switch {
	case apierrors.IsNotFound(err):
		return true // gone
	case err != nil:
		return false
	case k.UID != "" && string(pod.UID) != k.UID, pod.Spec.NodeName != "":
		return true // another pod of that name, or bound
	case !markedNotScheduled(pod):
		// kube-scheduler writes its FailedScheduling Event before it stores the pod's PodScheduled=False
		// status: until that lands, no snapshot can show the pod as pending.
		return false
	}
	v, err := strconv.ParseUint(pod.ResourceVersion, 10, 64)
	return err == nil && v <= rv
}

// markedNotScheduled reports whether kube-scheduler has stored its verdict on the pod: a PodScheduled
// condition that is False (Unschedulable, or SchedulerError when it will retry).
func markedNotScheduled(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			return c.Status == corev1.ConditionFalse
		}
	}
	return false
}

// timeForAnotherRun reports whether the invocation leaves time for another whole run: the last run's
// measured duration in this process with headroom (ColdRunEstimate before any was measured), and never
// less than LaunchMargin. A fixed margin would start a run that takes 25 s at 150,000 pods with 21 s left,
// to be cut off by the deadline half-way through its launches.
func (p *Provisioner) timeForAnotherRun(ctx context.Context) bool {
	return p.runs.Fits(ctx, p.deps.Now(), p.cfg.ColdRunEstimate, p.cfg.LaunchMargin)
}

// BatchResponse is the Lambda answer for a provisioning queue batch Handle worked on: every message is
// acknowledged — a failed batch would only hold up the FIFO group — except when Handle gave up
// unsatisfied (its runs failed or none saw the batch's pods) and the batch has been received fewer than
// MaxUnsatisfiedReceives times: then every message is handed back (a FIFO group is redelivered in order)
// and made visible again in seconds, so the runs that see its pods come at once, not from the backstop.
func (p *Provisioner) BatchResponse(ctx context.Context, ev events.SQSEvent, out Outcome) events.SQSEventResponse {
	var resp events.SQSEventResponse
	if !out.Unsatisfied || out.Trigger.Receives >= MaxUnsatisfiedReceives {
		return resp
	}
	for _, m := range ev.Records {
		resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
	}
	if p.deps.Visibility != nil && len(ev.Records) > 0 {
		if url, err := sqsbatch.QueueURL(ev.Records[0]); err == nil {
			_ = p.cfg.Retry.Requeue(ctx, p.deps.Visibility, url, ev.Records) // else back after the visibility timeout
		}
	}
	return resp
}

// sqsbatchSleep waits d or until ctx ends.
func sqsbatchSleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
