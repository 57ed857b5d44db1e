package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodewright/nodewright/shared/flows/provisioning"
	"github.com/nodewright/nodewright/shared/testsupport/awscalls"
)

// provisionerHandler is the provisioner function's queue handler, as functions/provisioner wraps
// Provisioner.Handle: runs until completed runs saw the batch's pods, every message acknowledged unless
// the invocation gave up unsatisfied (BatchResponse).
func (s *Sandbox) provisionerHandler(ctx context.Context, ev events.SQSEvent) events.SQSEventResponse {
	ctx = awscalls.WithFunction(ctx, "provisioner")
	payload, err := json.Marshal(ev)
	if err != nil {
		s.fail(fmt.Errorf("provisioner: encoding the batch: %w", err))
		return events.SQSEventResponse{}
	}
	out := s.provision(ctx, provisioning.TriggerOf(payload))
	if !out.Unsatisfied {
		return events.SQSEventResponse{}
	}
	return s.Provisioner.BatchResponse(ctx, ev, out)
}

// backstop is the provisioner's one-minute schedule.
func (s *Sandbox) backstop(ctx context.Context) { s.provision(ctx, provisioning.Trigger{}) }

func (s *Sandbox) provision(ctx context.Context, t provisioning.Trigger) provisioning.Outcome {
	ctx = awscalls.WithFunction(ctx, "provisioner")
	s.mu.Lock()
	s.stats.ProvisionerInvocations++
	n := s.stats.ProvisionerInvocations
	s.mu.Unlock()
	out := s.Provisioner.Handle(ctx, fmt.Sprintf("provisioner-%d", n), t)
	what := "schedule"
	if t.Queue() {
		what = fmt.Sprintf("batch of %d", t.Messages)
	}
	rep := out.Report
	s.noteLaunchedFor(out.Launched, out.PlacedInFlight)
	s.leaseNotReleased("provisioner", rep.LeaseNotReleased)
	for _, p := range out.Panics {
		if p != out.Err { // the last run's error is reported below
			s.fail(fmt.Errorf("provisioner (%s): a run crashed and a later one got past it: %w", what, p))
		}
	}
	s.mu.Lock()
	switch {
	case out.Coalesced || (out.Err == nil && !rep.Lease):
		s.stats.Coalesced++
	case out.Err == nil:
		s.stats.Solves++
	}
	s.mu.Unlock()
	switch {
	case out.Coalesced:
		s.Log.Info("coalesced", "trigger", what)
	case out.Err != nil && errors.Is(ctx.Err(), context.Canceled):
		// the sandbox is shutting down: the run was cut off, it did not fail
	case out.Err != nil:
		s.fail(fmt.Errorf("provisioner (%s): %w", what, out.Err))
	case !rep.Lease:
		s.Timeline.Printf("provisioner", "%s: another run holds the lease; coalesced", what)
	case rep.PendingPods == 0 && rep.Buffers == 0 && len(out.Launched) == 0:
		// Nothing pending, no CapacityBuffer and nothing launched (a static pool at its count).
		s.Log.Info("nothing pending", "trigger", what)
	case rep.PendingPods == 0 && len(out.Launched) == 0:
		// A CapacityBuffer's room is in place: the run is logged, and its errors count.
		s.Log.Info("nothing pending", "trigger", what, "buffers", rep.Buffers, "bufferPods", rep.BufferPods)
		for _, e := range rep.Errors {
			s.fail(fmt.Errorf("provisioner: %s", e))
		}
	default:
		virtual := ""
		if rep.Buffers > 0 {
			virtual = fmt.Sprintf(" and %d virtual pods of %d CapacityBuffers", rep.BufferPods, rep.Buffers)
		}
		s.Timeline.Printf("provisioner", "%s: %d pending pods%s, %d in flight; read in %.1f ms, solved in %.1f ms, launched in %.1f ms (the last run); launched %d, unschedulable %d",
			what, rep.PendingPods, virtual, rep.InFlight, ms(rep.ReadDuration), ms(rep.SolveDuration), ms(rep.LaunchDuration), len(out.Launched), len(rep.Unschedulable))
		for _, line := range rep.Static {
			s.Timeline.Printf("provisioner", "%s", line)
		}
		for _, u := range rep.Unschedulable {
			s.Timeline.Printf("provisioner", "cannot provision %s: %s", u.Pod, u.Reason)
		}
		for _, e := range rep.Errors {
			s.fail(fmt.Errorf("provisioner: %s", e))
		}
	}
	s.logRuns(what, out)
	if out.Runs > 1 || out.Unsatisfied {
		s.Timeline.Printf("provisioner", "%s: %d runs until a snapshot showed its pods as they are (satisfied: %t)", what, out.Runs, !out.Unsatisfied)
	}
	return out
}

// lifecyclePass is the lifecycle function: registration, initialization and repairs.
func (s *Sandbox) lifecyclePass(ctx context.Context) {
	ctx = awscalls.WithFunction(ctx, "lifecycle")
	rep, err := s.Lifecycle.Run(ctx, "lifecycle")
	if err != nil {
		if errors.Is(ctx.Err(), context.Canceled) {
			return // the sandbox is shutting down: the pass was cut off, it did not fail
		}
		s.fail(fmt.Errorf("lifecycle: %w", err))
		return
	}
	if !rep.Lease {
		return
	}
	s.leaseNotReleased("lifecycle", rep.LeaseNotReleased)
	s.mu.Lock()
	s.stats.LifecyclePasses++
	s.mu.Unlock()
	if rep.Registered+rep.Initialized+rep.Adopted+rep.Rebuilt+rep.HandedOver+rep.ClaimsDeleted+rep.Deferred > 0 {
		s.Timeline.Printf("lifecycle", "registered %d, initialized %d, adopted %d, rebuilt %d, handed to termination %d, claims deleted %d, deferred to the next pass %d",
			rep.Registered, rep.Initialized, rep.Adopted, rep.Rebuilt, rep.HandedOver, rep.ClaimsDeleted, rep.Deferred)
	}
	for _, e := range rep.Errors {
		s.fail(fmt.Errorf("lifecycle: %s", e))
	}
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// noteLaunchedFor records each claim an invocation's runs launched by its instance and, for each pod of
// the claim, the instance launched for it; and for each pod, the instance of the first claim that covered
// it (coveringInstanceFor): the claims the runs placed it on while in flight (placed) come first, since a
// pod is listed there only by the run that first saw it pending, and a later run may pack it into a new
// claim after other pods took its room on the claim in flight.
func (s *Sandbox) noteLaunchedFor(claims []provisioning.LaunchedClaim, placed []provisioning.InFlightPlacement) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.launchedFor == nil {
		s.launchedFor, s.coveredBy = map[types.UID]string{}, map[types.UID]string{}
		s.launchedClaims, s.claimInstance = map[string]provisioning.LaunchedClaim{}, map[string]string{}
	}
	for _, c := range claims {
		if c.InstanceID != "" {
			s.launchedClaims[c.InstanceID] = c
			s.claimInstance[c.Name] = c.InstanceID
		}
		for _, uid := range c.PodUIDs {
			s.launchedFor[uid] = c.InstanceID
		}
	}
	for _, pl := range placed {
		if id := s.claimInstance[pl.Claim]; id != "" {
			for _, uid := range pl.PodUIDs {
				if _, ok := s.coveredBy[uid]; !ok {
					s.coveredBy[uid] = id
				}
			}
		}
	}
	for _, c := range claims {
		for _, uid := range c.PodUIDs {
			if _, ok := s.coveredBy[uid]; !ok && c.InstanceID != "" {
				s.coveredBy[uid] = c.InstanceID
			}
		}
	}
}

// launchedInstanceFor is the instance of the claim a provisioner run launched for the pod ("" for none).
func (s *Sandbox) launchedInstanceFor(uid types.UID) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.launchedFor[uid]
}

// coveringInstanceFor is the instance of the first claim a provisioner run launched for the pod or placed
// it on while in flight ("" for none).
func (s *Sandbox) coveringInstanceFor(uid types.UID) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.coveredBy[uid]
}

// launchedClaimsByInstance returns every claim a provisioner run launched so far, by instance.
func (s *Sandbox) launchedClaimsByInstance() map[string]provisioning.LaunchedClaim {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.launchedClaims)
}

// logRuns puts each run of an invocation that had pods to solve on the timeline: how long after the
// previous run (or the quiet wait) it began and how long its phases took, so a burst's chain of runs
// shows where pending pods waited.
func (s *Sandbox) logRuns(what string, out provisioning.Outcome) {
	var prevEnd time.Time
	for i, t := range out.Timings {
		gap := out.Waited
		if !prevEnd.IsZero() && !t.Started.IsZero() {
			gap = t.Started.Sub(prevEnd)
		}
		if !t.Started.IsZero() {
			prevEnd = t.Started.Add(t.Total())
		}
		if !t.Lease || (t.PendingPods == 0 && t.Launched == 0) {
			continue
		}
		s.Timeline.Printf("provisioner", "%s, run %d/%d: began %.0f ms after the last; %s; %d pending, %d in flight, launched %d",
			what, i+1, len(out.Timings), ms(gap), t.Phases(), t.PendingPods, t.InFlight, t.Launched)
	}
}
