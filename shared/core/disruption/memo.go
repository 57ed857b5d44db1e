package disruption

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// Within one Sequence tick, Decide runs again after every command, and each run's single-node
// search used to simulate again, in the same order, every candidate the previous run had already
// found invalid, and the tick's last run all of them: on a consolidated 2,000-node cluster, about
// 650 failing simulations per command. Two rules make the runs after the first cheap.
//
// Closed replacements. A replacement launched in the current tick is not initialized, so a
// candidate pod the scheduler put there made the simulation invalid; since the scheduler fills
// existing capacity before it opens a node, every later candidate whose pods did not fit the
// initialized nodes landed there and was rejected, and a tick took about one replace. In
// Sequence, such a replacement is closed: it keeps the pods its own command moved there and takes
// no other pod (its room for pods is zero), so a later candidate's pods go to a claim of their
// own, and the command is judged on that claim's price. This is what the runner does: a
// replacement is launched for its command's pods, and no other command may count on capacity that
// is not up. It is done only when nothing but candidate pods is simulated (no pending pods, no
// pods of disrupting nodes), which then would not be placed on the replacement either.
// The trade-off: with one replace per tick, the next tick's candidates could use the leftover room
// of the replacement once initialized; a closed replacement's leftover room stays unused within
// its tick. On cmd/nodewright's BenchmarkPlanDisrupt clusters the cost after moves by -2.4% to
// +0.34% (250 nodes cheaper, 2,000 nodes up to 0.34% dearer) for 11 ticks instead of 46-70 (3-7 s
// instead of 11-56 s with everything else in place).
//
// Failed candidates stay failed in their tick. When the engine memoizes (memoSafe), a simulation
// places only the candidate's own pods, on the initialized destinations (first fit in a fixed
// order), the in-flight claims and closed replacements (constant, or taking nothing) and at most
// one new claim (whose pools, catalog, limits and prices do not change in a tick, as no pool has
// limits). Between two runs of a tick the initialized destinations only lose room: a command
// removes its nodes and binds their pods to other nodes; nothing is initialized and no pod leaves
// a node that stays. So the candidate's pods meet the same or less room and its simulation fails
// for the same reasons: a pod that fitted nowhere still fits nowhere, and pods that needed a claim
// still do, onto the same pools and types. The one way around this is a first-fit anomaly, where
// less room elsewhere leads the packing heuristic to a cheaper claim; a candidate skipped that
// way is simulated afresh at the next tick's first run, which never uses the memo, and the
// sequence ends only with a tick whose first (unmemoized) run decides nothing: the end state
// meets the same condition as without the memo. With topology rules (spread, pod affinity) the
// same holds but for one more way around: pods a command moves change the counts of the groups,
// which may let a candidate's pods through where they were refused before; such a candidate, too,
// waits for the next tick's first run. On the hard clusters (shared/testsupport/hardcluster, 40% of
// the deployments zone-spread) the memo changed no command and cut the 2,000-node dry run from
// 281 s to 103 s. With pending pods, pods of disrupting nodes or pool limits the memo is off.
// TestSequenceMemoMatchesFullSearch compares both on generated clusters, with and without spreads.

// memoSafe reports whether single-node failures may be memoized for the rest of the tick (see
// above): bound pods folded into allocatable (no topology rules anywhere), nothing simulated but
// the candidates' pods, and no pool limits.
func (e *engine) memoSafe() bool {
	if len(e.alwaysMoving) > 0 {
		return false
	}
	for _, p := range e.schedPools {
		if len(p.Limits) > 0 {
			return false
		}
	}
	return true
}

// knownFailed returns the reason a candidate's single-node simulation failed earlier in the tick,
// when the engine may rely on it.
func (e *engine) knownFailed(c *candidate) (string, bool) {
	if len(e.in.Options.failedSingle) == 0 || !e.memoSafe() {
		return "", false
	}
	why, ok := e.in.Options.failedSingle[c.name()]
	return why, ok
}

// closeNode returns a destination that keeps its pods but takes no new pod: its allocatable pod
// count is zero (every pod requests one), everything else unchanged.
func closeNode(n scheduling.ExistingNode) scheduling.ExistingNode {
	node := *n.Node
	node.Status.Allocatable = corev1.ResourceList{}
	for k, v := range n.Node.Status.Allocatable {
		node.Status.Allocatable[k] = v
	}
	node.Status.Allocatable[corev1.ResourcePods] = *resource.NewQuantity(0, resource.DecimalSI)
	n.Node = &node
	n.Allocatable.Pods = 0
	return n
}
