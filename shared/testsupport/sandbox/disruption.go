package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/nodewright/nodewright/shared/adapters/footprint"
	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/pricing"
	"github.com/nodewright/nodewright/shared/flows/disruptionrun"
	"github.com/nodewright/nodewright/shared/flows/termination"
	"github.com/nodewright/nodewright/shared/testsupport/awscalls"
)

// Sandbox pace of the disruption function. Deployed, its schedule fires every minute and a decision
// waits 15 s (disruptionrun.DefaultValidationDelay) before it is re-checked; the sandbox shortens both so
// a scale-in settles in about a minute. The timeout is the deployed function's.
const (
	DefaultDisruptionEvery           = 5 * time.Second
	DefaultDisruptionValidationDelay = 2 * time.Second
	disruptionTimeout                = 3 * time.Minute
)

// DisruptionRun is one invocation of the disruption function: when it started and ended, what
// triggered it ("schedule" or "queue") and the runner's report (Report.Lease false: another run held
// the lease and it did nothing).
type DisruptionRun struct {
	Start, End time.Time
	Trigger    string
	Report     disruptionrun.Report
	Err        error
}

// StartDisruption deploys the disruption function, wired as functions/disruption wires it: its own
// provisioner for replacements (the provisioning launch path), the functions' identity for the
// snapshot, taints and Events, the termination queue for drains; triggered by a timer (every
// Options.DisruptionEvery, standing in for the one-minute EventBridge schedule) and by its wake queue,
// which the termination flow feeds when it removes a claim, polled as a Lambda event source mapping
// polls it. The scenarios that do not exercise consolidation run without it, so their figures stay
// those of their own flows. Calling it again does nothing.
func (s *Sandbox) StartDisruption(ctx context.Context) error {
	s.mu.Lock()
	started := s.Disruption != nil
	s.mu.Unlock()
	if started {
		return nil
	}
	prices, err := pricing.NewProvider("us-east-1")
	if err != nil {
		return err
	}
	p := s.newProvisioner(footprint.Disruption, prices, 2, nil) // the fleet watch records the replacements' CreateFleet calls on the timeline
	mirrors, err := s.configMirrors()
	if err != nil {
		return err
	}
	r := disruptionrun.New(disruptionrun.Config{ValidationDelay: s.opts.DisruptionValidationDelay}, disruptionrun.Deps{
		Store:        s.Store,
		Cluster:      kube.NewSnapshotter(s.FunctionClient(footprint.Disruption), kube.SnapshotOptions{}),
		Launcher:     disruptionrun.ProvisionerLauncher{P: p},
		Nodes:        kube.NewActions(s.FunctionClient(footprint.Disruption)),
		Terminations: termination.NewSender(s.SQS, s.Queues.Termination),
		Events:       s.claimEvents(footprint.Disruption, nil),
		// CapacityBuffers are read (gate CapacityBuffer) so consolidation keeps their room, as
		// functions/disruption wires it.
		Buffers: kube.NewBuffers(s.FunctionClient(footprint.Disruption), ""),
		// The NodePool and EC2NodeClass mirrors, as functions/disruption writes them.
		Mirrors: mirrors,
		// The NodeClaim mirrors of the claims a run changes, as functions/disruption follows them.
		ClaimMirrors: s.claimFollower(footprint.Disruption),
		Now:          time.Now,
	})
	s.mu.Lock()
	if s.Disruption != nil {
		s.mu.Unlock()
		return nil
	}
	s.Disruption = r
	s.mu.Unlock()
	runCtx := s.runCtx
	s.goRun(func() {
		t := time.NewTicker(s.opts.DisruptionEvery)
		defer t.Stop()
		for {
			select {
			case <-runCtx.Done():
				return
			case <-t.C:
				ictx, cancel := context.WithTimeout(runCtx, disruptionTimeout)
				s.disrupt(ictx, "schedule")
				cancel()
			}
		}
	})
	s.goRun(func() {
		(&eventSource{name: "disruption", queueURL: s.Queues.DisruptionWake, sqs: s.SQS, handle: s.disruptionHandler,
			timeout: disruptionTimeout, idle: 100 * time.Millisecond, onError: s.fail}).run(runCtx)
	})
	s.Timeline.Printf("sandbox", "disruption function deployed: every %s (deployed: every minute) and on its wake queue; validation delay %s (deployed: 15s)",
		s.opts.DisruptionEvery, s.opts.DisruptionValidationDelay)
	return ctx.Err()
}

// disruptionHandler is the disruption function's wake-queue handler: any well-formed wake-up means one
// run; when the run fails the wake-ups come back (functions/disruption does the same).
func (s *Sandbox) disruptionHandler(ctx context.Context, ev events.SQSEvent) events.SQSEventResponse {
	var wakes []events.SQSMessage
	for _, m := range ev.Records {
		var w termination.DisruptionWake
		if err := json.Unmarshal([]byte(m.Body), &w); err != nil {
			s.Log.Warn("malformed disruption wake-up dropped", "messageId", m.MessageId, "reason", err.Error())
			continue
		}
		wakes = append(wakes, m)
	}
	var res events.SQSEventResponse
	if err := s.disrupt(ctx, "queue"); err != nil {
		for _, m := range wakes {
			res.BatchItemFailures = append(res.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
		}
	}
	return res
}

// disrupt is one invocation of the disruption function; it records the run and prints what it did.
func (s *Sandbox) disrupt(ctx context.Context, trigger string) error {
	ctx = awscalls.WithFunction(ctx, "disruption")
	s.mu.Lock()
	s.stats.DisruptionInvocations++
	n := s.stats.DisruptionInvocations
	r := s.Disruption
	s.mu.Unlock()
	start := time.Now()
	rep, err := r.Run(ctx, fmt.Sprintf("disruption-%d", n))
	s.mu.Lock()
	if err == nil && rep.Lease {
		s.stats.DisruptionRuns++
	}
	s.disruptionRuns = append(s.disruptionRuns, DisruptionRun{Start: start, End: time.Now(), Trigger: trigger, Report: rep, Err: err})
	s.mu.Unlock()
	if err != nil {
		s.fail(fmt.Errorf("disruption (%s): %w", trigger, err))
		return err
	}
	if !rep.Lease {
		s.Log.Info("disruption: another run holds the lease", "trigger", trigger)
		return nil
	}
	s.leaseNotReleased("disruption", rep.LeaseNotReleased)
	run := fmt.Sprintf("%s run %d, %.1fs", trigger, n, time.Since(start).Seconds())
	for _, a := range rep.Advanced {
		s.Timeline.Printf("disruption", "%s: %s", run, a)
	}
	for _, c := range rep.Commands {
		nodes := make([]string, len(c.Nodes))
		for i, cn := range c.Nodes {
			nodes[i] = cn.Name
		}
		repl := ""
		if len(c.Replacements) > 0 {
			repl = fmt.Sprintf(" with %d replacement(s)", len(c.Replacements))
		}
		s.Timeline.Printf("disruption", "%s: %s/%s %s %v%s, saves $%.4f/h: %s", run, c.Reason, c.Method, c.Action,
			nodes, repl, c.SavingsPerHour, c.Why)
	}
	for _, rj := range rep.Rejected {
		s.Timeline.Printf("disruption", "%s: rejected %s", run, rj)
	}
	for _, t := range rep.TaintsLifted {
		s.Timeline.Printf("disruption", "%s: lifted a stale karpenter.sh/disrupted taint from %s", run, t)
	}
	if rep.Skipped != "" {
		s.Timeline.Printf("disruption", "%s: decided nothing: %s", run, rep.Skipped)
	}
	for _, e := range rep.Errors {
		s.fail(fmt.Errorf("disruption: %s", e))
	}
	return nil
}

// DisruptionRuns returns the disruption function's invocations so far.
func (s *Sandbox) DisruptionRuns() []DisruptionRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]DisruptionRun(nil), s.disruptionRuns...)
}
