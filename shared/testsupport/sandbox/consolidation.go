package sandbox

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/disruption"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/flows/disruptionrun"
)

// ConsolidationOptions shape the consolidation scenario.
type ConsolidationOptions struct {
	// ScaleUpOptions shape the scale-up that builds the cluster first (default 30 replicas).
	ScaleUpOptions
	// ScaleInTo is the replicas inflate goes down to (default 6).
	ScaleInTo int32
	// Timeout bounds the wait for consolidation to settle after the scale-in (default 4 minutes).
	Timeout time.Duration
	// QuietRuns is how many disruption runs in a row must decide nothing, with no command in progress
	// and no node disrupting, for consolidation to count as settled (default 3).
	QuietRuns int
}

func (o *ConsolidationOptions) defaults() {
	o.ScaleUpOptions.defaults()
	if o.ScaleInTo <= 0 {
		o.ScaleInTo = 6
	}
	if o.Timeout <= 0 {
		o.Timeout = 4 * time.Minute
	}
	if o.QuietRuns <= 0 {
		o.QuietRuns = 3
	}
}

// ConsolidationNodePool is the NodePool the consolidation scenario scales up and in: the sample pool
// narrowed to 4- and 8-vCPU instance types, so 30 one-CPU pods need several nodes, consolidating at
// once (consolidateAfter 0s) under a budget of two nodes at a time, so a scale-in takes several steps.
const ConsolidationNodePool = "default"

var consolidationPoolConfig = narrowPoolConfig("", "720h", "0s")

// ConsolidationCommand is one command the disruption function executed, as its decision record (the
// state table's command) holds it.
type ConsolidationCommand struct {
	ID             string   `json:"id"`
	Reason         string   `json:"reason"`
	Method         string   `json:"method"`
	Action         string   `json:"action"`
	Nodes          []string `json:"nodes"`
	Replacements   []string `json:"replacements,omitempty"`
	SavingsPerHour float64  `json:"savingsPerHour"`
	Why            string   `json:"why"`
	Phase          string   `json:"phase"`
	Outcome        string   `json:"outcome,omitempty"`
	// StartedAfterSeconds and FinishedAfterSeconds are measured from the scale-in (-1: not finished).
	StartedAfterSeconds  float64 `json:"startedAfterSeconds"`
	FinishedAfterSeconds float64 `json:"finishedAfterSeconds"`
}

// ConsolidationReport is the consolidation scenario's outcome.
type ConsolidationReport struct {
	Scenario string `json:"scenario"`
	// Setup is the scale-up that built the cluster.
	Setup    ScaleUpReport `json:"setup"`
	NodePool string        `json:"nodePool"`
	// ScaledFrom and ScaledTo are inflate's replicas before and after the scale-in.
	ScaledFrom int `json:"scaledFrom"`
	ScaledTo   int `json:"scaledTo"`
	// NodesBefore/After and CostBefore/AfterPerHour: the live claims at the scale-in and at the end.
	NodesBefore         int            `json:"nodesBefore"`
	NodesAfter          int            `json:"nodesAfter"`
	CostBeforePerHour   float64        `json:"costBeforePerHour"`
	CostAfterPerHour    float64        `json:"costAfterPerHour"`
	InstanceTypesBefore map[string]int `json:"instanceTypesBefore"`
	InstanceTypesAfter  map[string]int `json:"instanceTypesAfter"`
	// ConsolidatedAfterSeconds: from the scale-in to the removal of the last Node consolidation drained
	// (-1: none removed).
	ConsolidatedAfterSeconds float64 `json:"consolidatedAfterSeconds"`
	// SettledAfterSeconds: from the scale-in to the moment consolidation was seen settled (-1: not
	// within the timeout).
	SettledAfterSeconds float64 `json:"settledAfterSeconds"`
	// MaxConcurrentDisruptions: the most Nodes of the NodePool disrupting at once (tainted
	// karpenter.sh/disrupted, their claim draining or terminating, or being deleted), sampled every
	// SampleEveryMillis from the scale-in to the end.
	MaxConcurrentDisruptions int `json:"maxConcurrentDisruptions"`
	// BudgetAllowed: the smallest number of the NodePool's nodes its budgets allowed disrupting at once
	// at any sample (disruption.AllowedDisruptions for Empty and Underutilized over the pool's
	// initialized Nodes, none subtracted as disrupting); BudgetExceededSamples: samples with more Nodes
	// disrupting than the budgets allowed at that moment.
	BudgetAllowed         int `json:"budgetAllowed"`
	BudgetExceededSamples int `json:"budgetExceededSamples"`
	Samples               int `json:"samples"`
	SampleEveryMillis     int `json:"sampleEveryMillis"`
	// Commands are the commands executed, with their reasons; Rejected the decisions dropped (failed
	// validation, budget ledger) with why; RolledBack the commands called off.
	Commands   []ConsolidationCommand `json:"commands"`
	Rejected   []string               `json:"rejected,omitempty"`
	RolledBack int                    `json:"rolledBack"`
	// DisruptionRuns: runs that held the lease since the scale-in; WakeInvocations the invocations the
	// wake queue triggered (those finding the lease held included: a run in progress covers them);
	// DisruptionEverySeconds and ValidationDelaySeconds the sandbox pace (deployed: 60 and 15).
	DisruptionRuns         int     `json:"disruptionRuns"`
	WakeInvocations        int     `json:"wakeInvocations"`
	DisruptionEverySeconds float64 `json:"disruptionEverySeconds"`
	ValidationDelaySeconds float64 `json:"validationDelaySeconds"`
	// PodsRunning, PodsUnbound: inflate's pods at the end; PodsLost: replicas not running at the end.
	PodsRunning     int      `json:"podsRunning"`
	PodsUnbound     int      `json:"podsUnbound"`
	PodsLost        int      `json:"podsLost"`
	LeakedInstances int      `json:"leakedInstances"`
	Leaks           []string `json:"leaks,omitempty"`
	DurationSeconds float64  `json:"durationSeconds"`
	// MirrorLagSeconds: for every disruption-state change a claim record holds from the disruption
	// function's start (Consolidatable set, a command's disrupting mark, Drifted set), the time to its
	// NodeClaim mirror showing it, read from the API server by a watch (as scale-up's
	// mirrorLagSeconds); LifecycleSweepSeconds: the lifecycle sweep's period, which writes any mirror
	// left behind.
	MirrorLagSeconds      Percentiles `json:"mirrorLagSeconds"`
	LifecycleSweepSeconds float64     `json:"lifecycleSweepSeconds"`
	Errors                []string    `json:"errors,omitempty"`
	// Targets: fewer nodes, lower cost, no pod lost or unbound, nothing leaked, the budget never
	// exceeded, consolidation settled.
	TargetsMet map[string]bool `json:"targetsMet"`
}

// Worked reports whether every target was met and no component failed.
func (r ConsolidationReport) Worked() bool {
	return allMet(r.TargetsMet, r.Errors)
}

// consolidationSampleEvery is how often the scenario samples the NodePool's disrupting Nodes.
const consolidationSampleEvery = 200 * time.Millisecond

// Consolidation runs the consolidation scenario: the NodePool is narrowed to 4- and 8-vCPU types, a
// scale-up of inflate builds several nodes, the disruption function is deployed, and inflate goes down
// to ScaleInTo replicas. The disruption function removes or replaces the nodes left empty or underused,
// within the NodePool's budget, until it settles.
func (s *Sandbox) Consolidation(ctx context.Context, o ConsolidationOptions) (ConsolidationReport, error) {
	o.defaults()
	rep := ConsolidationReport{Scenario: "consolidation", NodePool: ConsolidationNodePool, ScaledFrom: int(o.Replicas), ScaledTo: int(o.ScaleInTo),
		ConsolidatedAfterSeconds: -1, SettledAfterSeconds: -1, BudgetAllowed: -1, SampleEveryMillis: int(consolidationSampleEvery.Milliseconds()),
		DisruptionEverySeconds: s.opts.DisruptionEvery.Seconds(), ValidationDelaySeconds: s.opts.DisruptionValidationDelay.Seconds()}
	pool, err := consolidationPool()
	if err != nil {
		return rep, err
	}
	if err := applyConfig(ctx, s.Store, consolidationPoolConfig); err != nil {
		return rep, fmt.Errorf("narrowing NodePool %s: %w", ConsolidationNodePool, err)
	}
	s.Timeline.Printf("scenario", "NodePool %s narrowed to 4- and 8-vCPU types, consolidateAfter 0s, budget nodes: 2", ConsolidationNodePool)
	start := time.Now()
	setup, err := s.scaleUpSetup(ctx, o.ScaleUpOptions)
	rep.Setup = setup
	if err != nil {
		return rep, err
	}
	if setup.PodsRunning < setup.PodsRequested {
		return rep, fmt.Errorf("setup: only %d of %d pods running", setup.PodsRunning, setup.PodsRequested)
	}
	errsBefore := len(s.Errors())
	before, err := s.capacity(ctx)
	if err != nil {
		return rep, err
	}
	rep.NodesBefore, rep.CostBeforePerHour, rep.InstanceTypesBefore = before.Nodes, before.TotalPricePerHour, before.InstanceTypes
	watchedFrom := time.Now()
	mirrors, err := s.watchMirrors(ctx)
	if err != nil {
		return rep, err
	}
	defer mirrors.close()
	if err := s.StartDisruption(ctx); err != nil {
		return rep, err
	}

	s.Timeline.Restart()
	scaleIn := time.Now()
	patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, o.ScaleInTo)
	if _, err := s.Client.AppsV1().Deployments(o.Namespace).Patch(ctx, "inflate", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		return rep, fmt.Errorf("scaling inflate in: %w", err)
	}
	s.Timeline.Printf("scenario", "scaled deployment inflate from %d to %d replicas on %d nodes ($%.4f/h)", o.Replicas, o.ScaleInTo, rep.NodesBefore, rep.CostBeforePerHour)
	if err := s.awaitConsolidation(ctx, o, pool, scaleIn, &rep); err != nil {
		return rep, err
	}
	rep.DurationSeconds = round3(time.Since(start).Seconds())
	s.settle(ctx)
	rep.LifecycleSweepSeconds = s.opts.LifecycleSweepEvery.Seconds()
	if rep.MirrorLagSeconds, err = s.disruptionMirrorLag(ctx, mirrors, watchedFrom); err != nil {
		return rep, err
	}
	return s.finishConsolidation(ctx, rep, o, scaleIn, errsBefore)
}

// consolidationPool is the engine's view of the scenario's NodePool, for its budgets.
func consolidationPool() (disruption.NodePool, error) {
	return scenarioPool(consolidationPoolConfig, ConsolidationNodePool)
}

// scenarioPool is the engine's view of NodePool name as config (a scenario's YAML) defines it.
func scenarioPool(config, name string) (disruption.NodePool, error) {
	objs, err := apis.Decode("scenario.yaml", []byte(config))
	if err != nil {
		return disruption.NodePool{}, err
	}
	if errs := apis.DefaultAndValidate(objs); len(errs) > 0 {
		return disruption.NodePool{}, fmt.Errorf("scenario NodePool: %v", errs)
	}
	pools, err := disruptionrun.NodePoolsFrom(objs)
	if err != nil {
		return disruption.NodePool{}, err
	}
	for _, p := range pools {
		if p.Name() == name {
			return p, nil
		}
	}
	return disruption.NodePool{}, fmt.Errorf("NodePool %s missing from the scenario configuration", name)
}

// awaitConsolidation samples the NodePool's Nodes until consolidation settles (no command in progress,
// no Node disrupting, inflate's pods all running, and QuietRuns disruption runs in a row since the last
// activity decided nothing) or the timeout passes.
func (s *Sandbox) awaitConsolidation(ctx context.Context, o ConsolidationOptions, pool disruption.NodePool, scaleIn time.Time, rep *ConsolidationReport) error {
	deadline := scaleIn.Add(o.Timeout)
	seen := map[string]bool{}
	phases := map[string]state.CommandPhase{}
	lastActivity := scaleIn
	last := ""
	var lastGone time.Time
	for {
		now := time.Now()
		nodes, disrupting, err := s.poolNodes(ctx, ConsolidationNodePool)
		if err != nil {
			return err
		}
		initialized := 0
		present := map[string]bool{}
		for _, n := range nodes {
			present[n.Name] = true
			seen[n.Name] = true
			if n.Labels[scheduling.LabelNodeInitalized] == "true" {
				initialized++
			}
		}
		for name := range seen {
			if !present[name] {
				delete(seen, name)
				lastGone = now
				s.Timeline.Printf("scenario", "node %s is gone", name)
			}
		}
		allowed := min(disruption.AllowedDisruptions(pool, disruption.ReasonEmpty, now, initialized, 0),
			disruption.AllowedDisruptions(pool, disruption.ReasonUnderutilized, now, initialized, 0))
		rep.Samples++
		if initialized > 0 && (rep.BudgetAllowed < 0 || allowed < rep.BudgetAllowed) {
			rep.BudgetAllowed = allowed
		}
		if len(disrupting) > allowed {
			rep.BudgetExceededSamples++
		}
		if len(disrupting) > rep.MaxConcurrentDisruptions {
			rep.MaxConcurrentDisruptions = len(disrupting)
			s.Timeline.Printf("scenario", "%d nodes of NodePool %s disrupting at once %v (budget allows %d)", len(disrupting), ConsolidationNodePool, disrupting, allowed)
		}
		if len(disrupting) > 0 {
			lastActivity = now
		}
		active, err := s.followCommands(ctx, phases)
		if err != nil {
			return err
		}
		running, _, err := s.inflateRunning(ctx, o.Namespace, "")
		if err != nil {
			return err
		}
		quiet := 0
		for _, r := range s.DisruptionRuns() {
			if r.Start.Before(scaleIn) || r.Err != nil || !r.Report.Lease {
				continue
			}
			busy := len(r.Report.Commands)+len(r.Report.Advanced)+len(r.Report.Rejected)+len(r.Report.TaintsLifted) > 0 || r.Report.Skipped != ""
			if busy && r.End.After(lastActivity) {
				lastActivity = r.End
			}
			if !busy && r.Start.After(lastActivity) {
				quiet++
			}
		}
		if active > 0 {
			quiet = 0
		}
		line := fmt.Sprintf("%d nodes (%d disrupting), %d commands in progress, %d/%d inflate pods running, %d quiet disruption runs",
			len(nodes), len(disrupting), active, running, o.ScaleInTo, quiet)
		if line != last {
			s.Timeline.Printf("progress", "%s", line)
			last = line
		}
		if quiet >= o.QuietRuns && len(disrupting) == 0 && running >= int(o.ScaleInTo) {
			rep.SettledAfterSeconds = round3(now.Sub(scaleIn).Seconds())
			s.Timeline.Printf("scenario", "consolidation settled: %d disruption runs in a row decided nothing", quiet)
			break
		}
		if now.After(deadline) || ctx.Err() != nil {
			s.Timeline.Printf("scenario", "gave up waiting for consolidation to settle after %s", o.Timeout)
			break
		}
		time.Sleep(consolidationSampleEvery)
	}
	if !lastGone.IsZero() {
		rep.ConsolidatedAfterSeconds = round3(lastGone.Sub(scaleIn).Seconds())
	}
	return nil
}

// poolNodes lists the NodePool's Nodes and names those disrupting: tainted karpenter.sh/disrupted,
// being deleted, or whose claim is draining or terminating.
func (s *Sandbox) poolNodes(ctx context.Context, pool string) ([]corev1.Node, []string, error) {
	list, err := s.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: scheduling.LabelNodePool + "=" + pool})
	if err != nil {
		return nil, nil, err
	}
	claims, err := s.Store.ListClaims(ctx)
	if err != nil {
		return nil, nil, err
	}
	draining := map[string]bool{}
	for _, c := range claims {
		if c.NodeName != "" && (c.Lifecycle == state.Draining || c.Lifecycle == state.Terminating) {
			draining[c.NodeName] = true
		}
	}
	var disrupting []string
	for _, n := range list.Items {
		tainted := false
		for _, t := range n.Spec.Taints {
			tainted = tainted || t.Key == apis.DisruptedTaintKey
		}
		if tainted || n.DeletionTimestamp != nil || draining[n.Name] {
			disrupting = append(disrupting, n.Name)
		}
	}
	sort.Strings(disrupting)
	return list.Items, disrupting, nil
}

// followCommands prints each disruption command's phase as its record changes (the runner reports its
// commands only when its run ends) and counts the commands in progress.
func (s *Sandbox) followCommands(ctx context.Context, phases map[string]state.CommandPhase) (int, error) {
	cmds, err := s.Store.ListDisruptionCommands(ctx)
	if err != nil {
		return 0, err
	}
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].StartedAt.Before(cmds[j].StartedAt) })
	n := 0
	for _, c := range cmds {
		if c.Phase.Active() {
			n++
		}
		if phases[c.ID] == c.Phase {
			continue
		}
		phases[c.ID] = c.Phase
		nodes := make([]string, len(c.Candidates))
		for i, d := range c.Candidates {
			nodes[i] = d.Node
		}
		what := fmt.Sprintf("command %s %s: %s/%s %s %v", c.ID, c.Phase, c.Reason, c.Method, c.Action, nodes)
		if len(c.Replacements) > 0 {
			what += fmt.Sprintf(" → replacements %v", c.Replacements)
		}
		if c.Outcome != "" {
			what += " (" + c.Outcome + ")"
		}
		s.Timeline.Printf("scenario", "%s", what)
	}
	return n, nil
}

func (s *Sandbox) finishConsolidation(ctx context.Context, rep ConsolidationReport, o ConsolidationOptions, scaleIn time.Time, errsBefore int) (ConsolidationReport, error) {
	after, err := s.capacity(ctx)
	if err != nil {
		return rep, err
	}
	rep.NodesAfter, rep.CostAfterPerHour, rep.InstanceTypesAfter = after.Nodes, after.TotalPricePerHour, after.InstanceTypes
	rep.LeakedInstances, rep.Leaks = after.LeakedInstances, after.Leaks
	if rep.Commands, rep.RolledBack, err = s.commandsSince(ctx, time.Time{}, scaleIn); err != nil {
		return rep, err
	}
	for _, r := range s.DisruptionRuns() {
		if r.Start.Before(scaleIn) || r.Err != nil {
			continue
		}
		if r.Trigger == "queue" {
			rep.WakeInvocations++
		}
		if !r.Report.Lease {
			continue
		}
		rep.DisruptionRuns++
		rep.Rejected = append(rep.Rejected, r.Report.Rejected...)
	}
	if rep.PodsRunning, rep.PodsUnbound, err = s.inflatePods(ctx, o.Namespace); err != nil {
		return rep, err
	}
	rep.PodsLost = max(int(o.ScaleInTo)-rep.PodsRunning, 0)
	for _, e := range s.Errors()[errsBefore:] {
		rep.Errors = append(rep.Errors, e.Error())
	}
	rep.TargetsMet = map[string]bool{
		"nodesAfter<nodesBefore":                  rep.NodesAfter < rep.NodesBefore,
		"costAfter<costBefore":                    rep.CostAfterPerHour < rep.CostBeforePerHour,
		"podsLost=0":                              rep.PodsLost == 0,
		"noPodUnbound":                            rep.PodsUnbound == 0,
		"noLeakedInstances":                       rep.LeakedInstances == 0 && len(rep.Leaks) == 0,
		"maxConcurrentDisruptions<=budgetAllowed": rep.BudgetAllowed >= 0 && rep.MaxConcurrentDisruptions <= rep.BudgetAllowed && rep.BudgetExceededSamples == 0,
		"settled":                                 rep.SettledAfterSeconds >= 0,
		"noRolledBack":                            rep.RolledBack == 0,
		mirrorLagTarget:                           mirrorLagMet(rep.MirrorLagSeconds),
	}
	var missed, what []string
	for k, ok := range rep.TargetsMet {
		if !ok {
			missed = append(missed, k)
		}
	}
	sort.Strings(missed)
	for _, c := range rep.Commands {
		what = append(what, fmt.Sprintf("%s/%s %s %v", c.Reason, c.Method, c.Action, c.Nodes))
	}
	s.Timeline.Printf("scenario", "done: %d → %d nodes, $%.4f → $%.4f/h in %.1fs; commands: %s; at most %d disrupting at once (budget %d); pods lost %d, unbound %d; leaked %d; targets missed: %s",
		rep.NodesBefore, rep.NodesAfter, rep.CostBeforePerHour, rep.CostAfterPerHour, rep.ConsolidatedAfterSeconds, strings.Join(what, "; "),
		rep.MaxConcurrentDisruptions, rep.BudgetAllowed, rep.PodsLost, rep.PodsUnbound, rep.LeakedInstances, strings.Join(missed, ", "))
	return rep, nil
}
