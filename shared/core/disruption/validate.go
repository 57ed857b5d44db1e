package disruption

import (
	"fmt"

	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// ValidationKind classifies why a command no longer holds.
type ValidationKind string

const (
	// ValidationIncomplete: the fresh snapshot is incomplete, so nothing can be confirmed.
	ValidationIncomplete ValidationKind = "incomplete"
	// ValidationCandidate: a node is gone, changed, or no longer a candidate of the command's kind.
	ValidationCandidate ValidationKind = "candidate"
	// ValidationBudget: a budget no longer allows all of the command's nodes.
	ValidationBudget ValidationKind = "budget"
	// ValidationScheduling: re-simulating gives another decision.
	ValidationScheduling ValidationKind = "scheduling"
)

// ValidationError says why a command must not be executed.
type ValidationError struct {
	Kind   ValidationKind
	Reason string
}

func (e *ValidationError) Error() string { return fmt.Sprintf("%s: %s", e.Kind, e.Reason) }

// Validate re-checks a command on a fresh snapshot taken after it was decided (Karpenter waits 15
// seconds) and before any node is tainted: every node must still be a candidate (same claim, and
// still empty for an Empty command), the budgets must still allow them all, and for Underutilized
// the simulation must still give the same action, with the command's replacement instance types a
// subset of what the fresh simulation allows. It returns nil when the command may proceed, or a
// *ValidationError.
func Validate(cmd Command, fresh Input) error {
	if fresh.Incomplete != "" {
		return &ValidationError{ValidationIncomplete, "the snapshot is incomplete: " + fresh.Incomplete}
	}
	e := newEngine(&fresh)
	if cmd.Reason == ReasonExpired || cmd.Reason == ReasonManual || cmd.Reason == ReasonUnhealthy {
		return e.validateForceful(cmd)
	}
	// Only the command's nodes are judged as candidates (the rest of the cluster matters as
	// destinations and budgets, below): the same answer as judging every node, for the few pods the
	// command moves rather than every pod of the cluster.
	pdb := newPDBs(fresh.PDBs)
	var chosen []*candidate
	perPool := map[string]int{}
	for _, n := range cmd.Nodes {
		node, ok := e.byName[n.Name]
		if !ok {
			return &ValidationError{ValidationCandidate, fmt.Sprintf("node %s is gone", n.Name)}
		}
		c, why := judgeCandidate(&fresh, node, e.pools, pdb)
		switch {
		case why != "":
			return &ValidationError{ValidationCandidate, fmt.Sprintf("node %s is no longer a candidate: %s", n.Name, why)}
		case c.node.Claim != n.Claim:
			return &ValidationError{ValidationCandidate, fmt.Sprintf("node %s now belongs to claim %s, not %s", n.Name, c.node.Claim, n.Claim)}
		case cmd.Reason == ReasonEmpty && !c.empty():
			return &ValidationError{ValidationCandidate, fmt.Sprintf("node %s is no longer empty (%d pods whose eviction has a cost would have to move)", n.Name, len(c.pods)-c.freePods())}
		case cmd.Reason == ReasonDrifted && !c.drifted():
			return &ValidationError{ValidationCandidate, fmt.Sprintf("node %s is no longer drifted", n.Name)}
		case emptyDrift(cmd) && !c.noPods():
			return &ValidationError{ValidationCandidate, fmt.Sprintf("node %s is no longer empty (%d pods would have to move)", n.Name, len(c.pods))}
		case cmd.Reason != ReasonDrifted && !c.consolidatable():
			return &ValidationError{ValidationCandidate, fmt.Sprintf("node %s is no longer a candidate: %s", n.Name, c.unconsolidatable)}
		}
		chosen = append(chosen, c)
		perPool[c.pool.Name()]++
	}
	b := newBudgets(&fresh, e.pools)
	for pool, n := range perPool {
		if left := b.left(pool, cmd.Reason); n > left {
			return &ValidationError{ValidationBudget, fmt.Sprintf("NodePool %s's budget for %s now allows %d disruptions, the command needs %d", pool, cmd.Reason, left, n)}
		}
	}
	if cmd.Reason == ReasonEmpty || emptyDrift(cmd) {
		return nil
	}
	if !e.mayRun() {
		return &ValidationError{ValidationScheduling, "no simulation left in the search budget to re-check the command"}
	}
	var o outcome
	if cmd.Reason == ReasonDrifted {
		o = e.simulateRoll(chosen, true)
	} else {
		o = e.simulate(chosen)
	}
	return sameOutcome(cmd, o)
}

// emptyDrift reports whether cmd is drift's delete of empty nodes, which moves no pod. A drifted node
// whose pods all fit on other nodes is deleted too, moving them: that command is simulated again.
func emptyDrift(cmd Command) bool {
	return cmd.Reason == ReasonDrifted && cmd.Action == ActionDelete && len(cmd.Moves) == 0
}

// sameOutcome holds a command to the fresh simulation's outcome: valid, the same action, and the
// same replacements (sameReplacements).
func sameOutcome(cmd Command, o outcome) error {
	switch {
	case o.invalid != "":
		return &ValidationError{ValidationScheduling, o.invalid}
	case o.action != cmd.Action:
		return &ValidationError{ValidationScheduling, fmt.Sprintf("the nodes would now be %sd, not %sd", o.action, cmd.Action)}
	case cmd.Action == ActionReplace:
		return sameReplacements(cmd.Replacements, o.replacements)
	}
	return nil
}

// sameReplacements holds a command's replacements to the fresh simulation's: as many, and each
// command replacement's instance types a subset of a distinct fresh replacement's options (for one
// replacement, Karpenter's rule).
func sameReplacements(planned, fresh []scheduling.ClaimPlan) error {
	if len(planned) != len(fresh) {
		return &ValidationError{ValidationScheduling, fmt.Sprintf("the command launches %d replacements, the fresh simulation needs %d", len(planned), len(fresh))}
	}
	taken := make([]bool, len(fresh))
	for _, p := range planned {
		match, missing := -1, ""
		for j, f := range fresh {
			if taken[j] {
				continue
			}
			if m := notAllowed(p.InstanceTypeOptions, f.InstanceTypeOptions); m == "" {
				match = j
				break
			} else if missing == "" {
				missing = m
			}
		}
		if match < 0 {
			return &ValidationError{ValidationScheduling, fmt.Sprintf("instance type %s is no longer a valid replacement", missing)}
		}
		taken[match] = true
	}
	return nil
}

// notAllowed returns the first of names that allowed does not hold, or "".
func notAllowed(names, allowed []string) string {
	ok := make(map[string]bool, len(allowed))
	for _, n := range allowed {
		ok[n] = true
	}
	for _, n := range names {
		if !ok[n] {
			return n
		}
	}
	return ""
}

// validateForceful re-checks an Expired or Manual command: every node is still there, of the same
// claim, still expired or requested, and not already being disrupted; and the fresh simulation
// still needs the same replacements. Budgets and do-not-disrupt are not consulted.
func (e *engine) validateForceful(cmd Command) error {
	var chosen []*candidate
	for _, n := range cmd.Nodes {
		node, ok := e.byName[n.Name]
		pool, known := e.pools[n.NodePool]
		switch {
		case !ok:
			return &ValidationError{ValidationCandidate, fmt.Sprintf("node %s is gone", n.Name)}
		case node.Claim != n.Claim:
			return &ValidationError{ValidationCandidate, fmt.Sprintf("node %s now belongs to claim %s, not %s", n.Name, node.Claim, n.Claim)}
		case !known:
			return &ValidationError{ValidationCandidate, fmt.Sprintf("node %s's NodePool %s is unknown", n.Name, n.NodePool)}
		case isDisrupting(node):
			return &ValidationError{ValidationCandidate, fmt.Sprintf("node %s is already being disrupted", n.Name)}
		case !e.forced(node, cmd.Reason):
			return &ValidationError{ValidationCandidate, fmt.Sprintf("node %s is no longer to be removed for %s", n.Name, cmd.Reason)}
		}
		chosen = append(chosen, forcedCandidate(node, pool))
	}
	if !e.mayRun() {
		return &ValidationError{ValidationScheduling, "no simulation left in the search budget to re-check the command"}
	}
	return sameOutcome(cmd, e.simulateRoll(chosen, false))
}
