package disruptionrun

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/disruption"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/flows/provisioning"
)

// world is one complete read of everything a decision needs, and the engine's input built from it.
type world struct {
	input    disruption.Input
	snap     *kube.Snapshot
	claims   []state.Claim
	commands []state.DisruptionCommand
	launches Launches
	// claimOf is each Node's claim (found by provider id, else by node name).
	claimOf map[string]state.Claim
	// reserved are the claims that hold a ledger reservation: the candidates of active commands.
	reserved map[string]bool
	// allowed is each pool's budget allowance per reason at input.Now.
	allowed map[string]map[disruption.Reason]int
	// static are the static NodePools (spec.replicas), which the engine never sees (staticscaledown.go).
	static   []staticPool
	problems []string
	// driftChanges are the claims' drift records to update (drift.go); drifted counts the drifted nodes
	// per "pool/reason", expired the expired ones per pool.
	driftChanges []driftChange
	drifted      map[string]int
	expired      map[string]int
	// consolidatable are the claims' Consolidatable marks to set or clear (consolidatable.go).
	consolidatable []consolidatableChange
	// reused counts the nodes whose entry was carried over from the previous read of the run (see
	// fill); the others were built afresh.
	reused int
}

// read takes a complete snapshot: state (claims, commands, configuration), cluster, catalog and
// unavailable offerings. Whatever cannot be read is named in input.Incomplete, so Decide decides
// nothing and Validate refuses (DESIGN decision 6).
//
// snap, when set, is the cluster as the run read it first (advance's read, taken before this state);
// otherwise the cluster is read after the state. The cluster read is then the Snapshotter bringing its
// views forward (only what changed crosses the wire), and prev, the run's previous read, lends fill the
// node entries whose Node and pods did not change: a validation or the next command's decision is
// not a second whole read. Either way the input is complete and as current as the read.
func (r *Runner) read(ctx context.Context, snap *kube.Snapshot, prev *world) *world {
	w := &world{claimOf: map[string]state.Claim{}, reserved: map[string]bool{}, allowed: map[string]map[disruption.Reason]int{},
		drifted: map[string]int{}, expired: map[string]int{}}
	w.input.Now = r.deps.Now()
	var missing []string
	fail := func(what string, err error) { missing = append(missing, fmt.Sprintf("%s: %v", what, err)) }
	var err error
	if w.claims, err = r.deps.Store.ListClaims(ctx); err != nil {
		fail("claims", err)
	}
	if w.commands, err = r.deps.Store.ListDisruptionCommands(ctx); err != nil {
		fail("disruption commands", err)
	}
	pools, static, problems, err := r.readNodePools(ctx)
	if err != nil {
		fail("NodePools", err)
	}
	w.static = static
	w.problems = append(w.problems, problems...)
	if w.snap = snap; snap == nil {
		if w.snap, err = r.deps.Cluster.Snapshot(ctx); err != nil {
			fail("cluster", err)
		}
	}
	if w.launches, err = r.deps.Launcher.PrepareLaunches(ctx); err != nil {
		fail("catalog", err)
	}
	if len(missing) > 0 {
		w.input.Incomplete = strings.Join(missing, "; ")
		return w
	}
	w.problems = append(w.problems, w.launches.Problems()...)
	s := w.launches.Settings()
	w.input.Options.SpotToSpotConsolidation = s.FeatureGates.SpotToSpotConsolidation
	w.input.MinValuesPolicy, w.input.IgnorePreferences = scheduling.MinValuesPolicy(s.MinValuesPolicy), s.IgnorePreferences()
	r.fill(w, pools, prev)
	r.keepBufferRoom(ctx, w, s.FeatureGates.CapacityBuffer)
	return w
}

// readNodePools reads the stored NodePools into the engine's view, and the static ones into theirs. A
// NodePool that does not decode or convert is left out (its nodes are kept as unmanaged by a known pool)
// and named in problems.
func (r *Runner) readNodePools(ctx context.Context) ([]disruption.NodePool, []staticPool, []string, error) {
	items, err := r.deps.Store.ListConfig(ctx, state.KindNodePool)
	if err != nil {
		return nil, nil, nil, err
	}
	var out []disruption.NodePool
	var static []staticPool
	var problems []string
	for _, it := range items {
		np := &apis.NodePool{}
		if err := json.Unmarshal([]byte(it.Spec), np); err != nil {
			problems = append(problems, fmt.Sprintf("NodePool %s: decoding stored spec: %v", it.Name, err))
			continue
		}
		objs := apis.Objects{NodePools: []*apis.NodePool{np}}
		pools, err := NodePoolsFrom(objs)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		sp, err := staticPoolsFrom(objs)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		out, static = append(out, pools...), append(static, sp...)
	}
	return out, static, problems, nil
}

// fill builds the engine's input from a complete read. A node whose Node and pods are what they were
// in prev (the run's previous read; nil: none) keeps its pods and its last pod event from there
// (sameNode); everything read from the claims and the configuration is judged afresh for every node.
func (r *Runner) fill(w *world, pools []disruption.NodePool, prev *world) {
	in, snap := &w.input, w.snap
	sched := map[string]scheduling.NodePool{}
	for _, p := range w.launches.NodePools() {
		sched[p.Name] = p
	}
	for _, p := range pools {
		if s, ok := sched[p.Name()]; ok {
			p.Scheduling = s // with its EC2NodeClass's instance types
		}
		in.NodePools = append(in.NodePools, p)
	}
	repriced := overlaidPrices(sched)
	poolOf := make(map[string]*disruption.NodePool, len(in.NodePools))
	for i := range in.NodePools {
		poolOf[in.NodePools[i].Name()] = &in.NodePools[i]
	}
	claims := provisioning.NewClaimIndex(w.claims) // the provisioner's rule for which Nodes are ours
	commanded := map[string]bool{}                 // nodes held by an active command
	for _, c := range w.commands {
		if !c.Phase.Active() {
			continue
		}
		for _, d := range c.Candidates {
			commanded[d.Node] = true
			w.reserved[d.Claim] = true
		}
	}
	podsOf := podsByNode(snap.Bound)
	before := map[string]*disruption.Node{}
	if prev != nil && prev.input.Incomplete == "" {
		for i := range prev.input.Nodes {
			before[prev.input.Nodes[i].Name()] = &prev.input.Nodes[i]
		}
	}
	in.Nodes = make([]disruption.Node, 0, len(snap.Nodes))
	r.pods.mu.Lock()
	defer r.pods.mu.Unlock()
	seen := make(map[string]bool, len(snap.Nodes))
	for i := range snap.Nodes {
		n := &snap.Nodes[i]
		seen[n.Name] = true
		pods := podsOf[n.Name]
		var lastPodEvent time.Time
		if old := before[n.Name]; old != nil && sameNode(old, n, pods) {
			// The same pods: lastEvent would find the fingerprint it recorded and answer as before.
			pods, lastPodEvent = old.Pods, old.LastPodEvent
			w.reused++
		} else {
			lastPodEvent = r.pods.lastEvent(n, pods, in.Now)
		}
		pool := n.Labels[scheduling.LabelNodePool]
		c, ok := claims.Of(n)
		if ok {
			w.claimOf[n.Name] = c
		} else {
			// A Node without a claim record is not Nodewright's to disrupt (no claim to terminate, no
			// price): it stays a destination, as an unmanaged Node. The lifecycle deals with ghosts.
			pool = ""
		}
		node := disruption.Node{Node: n, Pods: pods, NodePool: pool,
			Initialized:  pool == "" || n.Labels[scheduling.LabelNodeInitalized] == "true",
			LastPodEvent: lastPodEvent}
		if pool != "" {
			node.Claim = c.Name
			node.InstanceType = firstOf(c.InstanceType, n.Labels[corev1.LabelInstanceTypeStable])
			node.Zone = firstOf(c.Zone, n.Labels[corev1.LabelTopologyZone])
			node.CapacityType = firstOf(c.CapacityType, n.Labels[scheduling.LabelCapacityType])
			node.Price = c.PricePerHour
			if price, ok := repriced.of(pool, node.InstanceType, node.Zone, node.CapacityType, c.PriceOverlayApplied); ok {
				node.Price = price
			}
			node.LaunchedAt = launchedAt(c, n)
			if c.InitializedAt != nil {
				// Set by the lifecycle when it initializes the claim: consolidateAfter counts from it.
				node.InitializedAt = *c.InitializedAt
			}
			if len(c.Replaces) > 0 {
				node.ReplacementLaunchedAt = node.LaunchedAt
			}
			if c.TerminationGracePeriod != nil {
				node.TerminationGracePeriod = *c.TerminationGracePeriod
			}
			// A claim with a GoneBy loses its instance whatever is decided (a capacity block's end handed
			// over, not yet draining): no command takes it and no pod moves onto it.
			node.Disrupting = commanded[n.Name] || (ok && (c.Lifecycle == state.Draining || c.Lifecycle == state.Terminating || c.GoneBy != nil))
			r.judge(w, &node, c)
			judgeConsolidatable(w, &node, c, poolOf[pool], r.pods.guessed(n, lastPodEvent))
		}
		in.Nodes = append(in.Nodes, node)
	}
	r.pods.forget(seen)
	in.InFlight = w.launches.InFlight(w.claims, snap)
	for _, p := range snap.Pending {
		if p.DeletionTimestamp == nil && scheduling.IsProvisionable(p) {
			in.PendingPods = append(in.PendingPods, p)
		}
	}
	in.PDBs = snap.PDBs
	in.DaemonSets = snap.DaemonSets
	in.Namespaces = snap.Namespaces
	in.PersistentVolumeClaims = snap.PVCs
	in.PersistentVolumes = snap.PVs
	in.StorageClasses = snap.StorageClasses
	in.CSINodes = snap.CSINodes
	in.Unavailable = w.launches.Unavailable()
	r.allowances(w)
}

// allowances computes each pool's budget allowance per consolidation reason as the engine will.
func (r *Runner) allowances(w *world) {
	nodes, disrupting := poolCounts(w)
	for _, p := range w.input.NodePools {
		m := map[disruption.Reason]int{}
		for _, reason := range []disruption.Reason{disruption.ReasonEmpty, disruption.ReasonDrifted, disruption.ReasonUnderutilized} {
			m[reason] = disruption.AllowedDisruptions(p, reason, w.input.Now, nodes[p.Name()], disrupting[p.Name()])
		}
		w.allowed[p.Name()] = m
	}
}

// ledgerAllowance is the count a ledger reservation for pool and reason is conditioned on: the budget
// before nodes already disrupting are subtracted, minus the disrupting nodes that hold no reservation
// (drained by drift, interruption or a user), since the ledger counts only reservations. Two runs that
// overlap compute the same allowance, and the ledger's conditional write keeps them both under it.
func ledgerAllowance(w *world, pool string, reason disruption.Reason) int {
	var p *disruption.NodePool
	for i := range w.input.NodePools {
		if w.input.NodePools[i].Name() == pool {
			p = &w.input.NodePools[i]
		}
	}
	for i := range w.static {
		if w.static[i].name() == pool {
			p = &w.static[i].pool
		}
	}
	if p == nil {
		return 0
	}
	nodes, unreserved := 0, 0
	for i := range w.input.Nodes {
		n := &w.input.Nodes[i]
		if n.NodePool != pool || !n.Initialized {
			continue
		}
		nodes++
		if isDisrupting(n) && !w.reserved[n.Claim] {
			unreserved++
		}
	}
	return disruption.AllowedDisruptions(*p, reason, w.input.Now, nodes, unreserved)
}

// isDisrupting mirrors the engine's count of disrupting nodes for budgets: marked, deleting, tainted
// karpenter.sh/disrupted, or not Ready.
func isDisrupting(n *disruption.Node) bool {
	if n.Disrupting || n.Node.DeletionTimestamp != nil || hasDisruptedTaint(n.Node) {
		return true
	}
	for _, c := range n.Node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status != corev1.ConditionTrue
		}
	}
	return true
}

func hasDisruptedTaint(n *corev1.Node) bool {
	for i := range n.Spec.Taints {
		if n.Spec.Taints[i].MatchTaint(&apis.DisruptedNoScheduleTaint) {
			return true
		}
	}
	return false
}

// launchedAt is when the claim launched (else when it was written), else when the Node was created.
func launchedAt(c state.Claim, n *corev1.Node) time.Time {
	switch {
	case c.LaunchedAt != nil:
		return *c.LaunchedAt
	case !c.CreatedAt.IsZero():
		return c.CreatedAt
	}
	return n.CreationTimestamp.Time
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// poolCounts counts, per NodePool, the initialized nodes of the run's input and those of them being
// disrupted: what budgets are taken from.
func poolCounts(w *world) (nodes, disrupting map[string]int) {
	nodes, disrupting = map[string]int{}, map[string]int{}
	for i := range w.input.Nodes {
		n := &w.input.Nodes[i]
		if n.NodePool == "" || !n.Initialized {
			continue
		}
		nodes[n.NodePool]++
		if isDisrupting(n) {
			disrupting[n.NodePool]++
		}
	}
	return nodes, disrupting
}
