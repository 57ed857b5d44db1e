package sandbox

import (
	"context"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/disruption"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// RollReport is what the roll scenarios (drift, expiry) share: the NodePool's original nodes, how many
// of its nodes were disrupting at once against its budget, the commands, and the pods and instances at
// the end.
type RollReport struct {
	Scenario string        `json:"scenario"`
	Setup    ScaleUpReport `json:"setup"`
	NodePool string        `json:"nodePool"`
	// NodesBefore: the NodePool's Nodes when the roll began (the original nodes); NodesAfter: its live
	// claims at the end (the replacements, and any original left).
	NodesBefore   int      `json:"nodesBefore"`
	NodesAfter    int      `json:"nodesAfter"`
	OriginalNodes []string `json:"originalNodes"`
	// MaxConcurrentDisruptions: the most Nodes of the NodePool disrupting at once (as in the
	// consolidation scenario), sampled every SampleEveryMillis; BudgetAllowed: the smallest number of
	// the pool's initialized Nodes its budgets allowed disrupting for the scenario's reason at any sample;
	// BudgetExceededSamples: samples with more disrupting than allowed then.
	MaxConcurrentDisruptions int `json:"maxConcurrentDisruptions"`
	BudgetAllowed            int `json:"budgetAllowed"`
	BudgetExceededSamples    int `json:"budgetExceededSamples"`
	Samples                  int `json:"samples"`
	SampleEveryMillis        int `json:"sampleEveryMillis"`
	// Commands: the commands executed since the roll began; Rejected: decisions dropped; RolledBack:
	// commands called off.
	Commands   []ConsolidationCommand `json:"commands"`
	Rejected   []string               `json:"rejected,omitempty"`
	RolledBack int                    `json:"rolledBack"`
	// PodsRunning, PodsUnbound: inflate's pods at the end; PodsLost: replicas not running at the end.
	PodsRunning     int      `json:"podsRunning"`
	PodsUnbound     int      `json:"podsUnbound"`
	PodsLost        int      `json:"podsLost"`
	LeakedInstances int      `json:"leakedInstances"`
	Leaks           []string `json:"leaks,omitempty"`
	DurationSeconds float64  `json:"durationSeconds"`
	// MirrorLagSeconds: for every disruption-state change a claim record holds from the roll's start
	// (Drifted set, a command's disrupting mark, Consolidatable set), the time to its NodeClaim mirror
	// showing it, read from the API server by a watch (as scale-up's mirrorLagSeconds); the lifecycle
	// sweep, which writes any mirror left behind, runs every LifecycleSweepSeconds.
	MirrorLagSeconds      Percentiles     `json:"mirrorLagSeconds"`
	LifecycleSweepSeconds float64         `json:"lifecycleSweepSeconds"`
	Errors                []string        `json:"errors,omitempty"`
	TargetsMet            map[string]bool `json:"targetsMet"`
}

// Worked reports whether every target was met and no component failed.
func (r RollReport) Worked() bool {
	return allMet(r.TargetsMet, r.Errors)
}

// rollWatch follows a NodePool's original nodes through a roll: when each went, the latest record of
// every claim seen, and the pool's disrupting nodes against its budget for reason.
type rollWatch struct {
	pool      disruption.NodePool
	reason    disruption.Reason
	namespace string
	replicas  int
	// originals maps each original Node to its claim; gone to when it was first seen gone.
	originals map[string]string
	gone      map[string]time.Time
	// claims is the latest record of each claim seen; drifted the Drifted reason each claim was first seen
	// with (sticky: it is kept after the claim is deleted).
	claims  map[string]state.Claim
	drifted map[string]string
	phases  map[string]state.CommandPhase
	// mirrors watches the NodeClaim mirrors from before the disruption function starts (see
	// disruptionMirrorLag); watchedFrom is when it started.
	mirrors     *mirrorWatch
	watchedFrom time.Time
}

// newRollWatch records the pool's Nodes now as the originals.
func (s *Sandbox) newRollWatch(ctx context.Context, pool disruption.NodePool, reason disruption.Reason, namespace string, replicas int) (*rollWatch, error) {
	w := &rollWatch{pool: pool, reason: reason, namespace: namespace, replicas: replicas, originals: map[string]string{},
		gone: map[string]time.Time{}, claims: map[string]state.Claim{}, drifted: map[string]string{}, phases: map[string]state.CommandPhase{}}
	nodes, _, err := s.poolNodes(ctx, pool.Name())
	if err != nil {
		return nil, err
	}
	if err := w.readClaims(ctx, s.Store); err != nil {
		return nil, err
	}
	byNode := map[string]string{}
	for _, c := range w.claims {
		if c.NodeName != "" && c.Lifecycle.Live() {
			byNode[c.NodeName] = c.Name
		}
	}
	for _, n := range nodes {
		w.originals[n.Name] = byNode[n.Name]
	}
	return w, nil
}

// readClaims reads every claim, the deleted ones too: the watch follows the originals until they are gone.
func (w *rollWatch) readClaims(ctx context.Context, store *state.Store) error {
	claims, err := store.ListAllClaims(ctx)
	if err != nil {
		return err
	}
	for _, c := range claims {
		w.claims[c.Name] = c
		if c.Drifted != nil && w.drifted[c.Name] == "" {
			w.drifted[c.Name] = c.Drifted.Reason
		}
	}
	return nil
}

// originalNames lists the original Nodes, sorted.
func (w *rollWatch) originalNames() []string {
	out := make([]string, 0, len(w.originals))
	for n := range w.originals {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// follow samples until every original Node is gone, inflate's replicas all run and no command is in
// progress, or the deadline passes. It returns when the last original Node went (zero: not all went).
func (s *Sandbox) followRoll(ctx context.Context, w *rollWatch, deadline time.Time, rep *RollReport) (time.Time, error) {
	last := ""
	var lastGone time.Time
	for {
		now := time.Now()
		nodes, disrupting, err := s.poolNodes(ctx, w.pool.Name())
		if err != nil {
			return time.Time{}, err
		}
		if err := w.readClaims(ctx, s.Store); err != nil {
			return time.Time{}, err
		}
		present := map[string]bool{}
		initialized := 0
		for _, n := range nodes {
			present[n.Name] = true
			if n.Labels[scheduling.LabelNodeInitalized] == "true" {
				initialized++
			}
		}
		for name := range w.originals {
			if _, seen := w.gone[name]; !seen && !present[name] {
				w.gone[name], lastGone = now, now
				s.Timeline.Printf("scenario", "original node %s is gone (%d of %d)", name, len(w.gone), len(w.originals))
			}
		}
		allowed := disruption.AllowedDisruptions(w.pool, w.reason, now, initialized, 0)
		rep.Samples++
		if initialized > 0 && (rep.BudgetAllowed < 0 || allowed < rep.BudgetAllowed) {
			rep.BudgetAllowed = allowed
		}
		if len(disrupting) > allowed {
			rep.BudgetExceededSamples++
		}
		if len(disrupting) > rep.MaxConcurrentDisruptions {
			rep.MaxConcurrentDisruptions = len(disrupting)
			s.Timeline.Printf("scenario", "%d nodes of NodePool %s disrupting at once %v (budget for %s allows %d)", len(disrupting), w.pool.Name(), disrupting, w.reason, allowed)
		}
		active, err := s.followCommands(ctx, w.phases)
		if err != nil {
			return time.Time{}, err
		}
		running, _, err := s.inflateRunning(ctx, w.namespace, "")
		if err != nil {
			return time.Time{}, err
		}
		line := fmt.Sprintf("%d nodes (%d disrupting), %d of %d original nodes gone, %d drifted claims, %d commands in progress, %d/%d inflate pods running",
			len(nodes), len(disrupting), len(w.gone), len(w.originals), len(w.drifted), active, running, w.replicas)
		if line != last {
			s.Timeline.Printf("progress", "%s", line)
			last = line
		}
		if len(w.gone) == len(w.originals) && running >= w.replicas && active == 0 {
			return lastGone, nil
		}
		if now.After(deadline) || ctx.Err() != nil {
			s.Timeline.Printf("scenario", "gave up waiting for the roll: %d of %d original nodes gone", len(w.gone), len(w.originals))
			if len(w.gone) < len(w.originals) {
				return time.Time{}, nil
			}
			return lastGone, nil
		}
		time.Sleep(consolidationSampleEvery)
	}
}

// finishRoll fills the report's common part at the end of a roll begun at since.
func (s *Sandbox) finishRoll(ctx context.Context, w *rollWatch, rep *RollReport, since time.Time, errsBefore int) error {
	if err := w.readClaims(ctx, s.Store); err != nil {
		return err
	}
	after, err := s.capacity(ctx)
	if err != nil {
		return err
	}
	rep.NodesAfter, rep.LeakedInstances, rep.Leaks = after.Nodes, after.LeakedInstances, after.Leaks
	if rep.Commands, rep.RolledBack, err = s.commandsSince(ctx, since, since); err != nil {
		return err
	}
	for _, r := range s.DisruptionRuns() {
		if !r.Start.Before(since) && r.Err == nil && r.Report.Lease {
			rep.Rejected = append(rep.Rejected, r.Report.Rejected...)
		}
	}
	if rep.PodsRunning, rep.PodsUnbound, err = s.inflatePods(ctx, w.namespace); err != nil {
		return err
	}
	rep.PodsLost = max(w.replicas-rep.PodsRunning, 0)
	if w.mirrors != nil {
		rep.MirrorLagSeconds, err = s.disruptionMirrorLag(ctx, w.mirrors, w.watchedFrom)
		w.mirrors.close()
		if err != nil {
			return err
		}
	}
	rep.LifecycleSweepSeconds = s.opts.LifecycleSweepEvery.Seconds()
	for _, e := range s.Errors()[errsBefore:] {
		rep.Errors = append(rep.Errors, e.Error())
	}
	return nil
}

// commandsSince lists the disruption commands started since t, oldest first, with the times measured
// from origin, and counts those rolled back.
func (s *Sandbox) commandsSince(ctx context.Context, t, origin time.Time) ([]ConsolidationCommand, int, error) {
	cmds, err := s.Store.ListDisruptionCommands(ctx)
	if err != nil {
		return nil, 0, err
	}
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].StartedAt.Before(cmds[j].StartedAt) })
	var out []ConsolidationCommand
	rolledBack := 0
	for _, c := range cmds {
		if c.StartedAt.Before(t) {
			continue
		}
		cc := ConsolidationCommand{ID: c.ID, Reason: c.Reason, Method: c.Method, Action: c.Action, Replacements: c.Replacements,
			SavingsPerHour: c.SavingsPerHour, Why: c.Why, Phase: string(c.Phase), Outcome: c.Outcome,
			StartedAfterSeconds: round3(c.StartedAt.Sub(origin).Seconds()), FinishedAfterSeconds: -1}
		if c.FinishedAt != nil {
			cc.FinishedAfterSeconds = round3(c.FinishedAt.Sub(origin).Seconds())
		}
		for _, d := range c.Candidates {
			cc.Nodes = append(cc.Nodes, d.Node)
		}
		if c.Phase == state.CommandRolledBack {
			rolledBack++
		}
		out = append(out, cc)
	}
	return out, rolledBack, nil
}

// inflatePods counts inflate's pods running and those not bound to a Node (pods being deleted aside).
func (s *Sandbox) inflatePods(ctx context.Context, namespace string) (running, unbound int, err error) {
	list, err := s.Client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: "app=inflate"})
	if err != nil {
		return 0, 0, err
	}
	for _, p := range list.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		if p.Spec.NodeName == "" {
			unbound++
		}
		if p.Status.Phase == corev1.PodRunning {
			running++
		}
	}
	return running, unbound, nil
}

// setUpRoll applies the scenario's NodePool, scales inflate up on it and deploys the disruption
// function; the pool's Nodes then are the roll's originals.
func (s *Sandbox) setUpRoll(ctx context.Context, config string, reason disruption.Reason, o ScaleUpOptions, rep *RollReport) (*rollWatch, error) {
	pool, err := scenarioPool(config, rep.NodePool)
	if err != nil {
		return nil, err
	}
	if err := applyConfig(ctx, s.Store, config); err != nil {
		return nil, fmt.Errorf("applying NodePool %s: %w", rep.NodePool, err)
	}
	setup, err := s.scaleUpSetup(ctx, o)
	rep.Setup = setup
	if err != nil {
		return nil, err
	}
	if setup.PodsRunning < setup.PodsRequested {
		return nil, fmt.Errorf("setup: only %d of %d pods running", setup.PodsRunning, setup.PodsRequested)
	}
	w, err := s.newRollWatch(ctx, pool, reason, o.Namespace, int(o.Replicas))
	if err != nil {
		return nil, err
	}
	rep.OriginalNodes = w.originalNames()
	rep.NodesBefore = len(rep.OriginalNodes)
	w.watchedFrom = time.Now()
	if w.mirrors, err = s.watchMirrors(ctx); err != nil {
		return nil, err
	}
	if err := s.StartDisruption(ctx); err != nil {
		w.mirrors.close()
		return nil, err
	}
	return w, nil
}
