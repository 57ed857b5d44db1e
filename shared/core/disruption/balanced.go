package disruption

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// BalancedK is the Balanced policy's k: a move is approved when its score is at least 1/k, that is
// when its share of the pool's cost saved is at least 1/k of its share of the pool's disruption
// cost (Karpenter's constant, 2).
const BalancedK = 2

// MaxRejectedMoves bounds Result.Rejected: one Decide lists at most this many moves the Balanced
// policy rejected (single-node may reject one per candidate).
const MaxRejectedMoves = 50

// PoolScore is the Balanced score of a move in one NodePool whose policy is Balanced.
type PoolScore struct {
	NodePool string `json:"nodePool"`
	// SavingsPerHour is the part of the move's saving credited to the pool: all of it when the move
	// takes nodes of this pool only, else in proportion to what the pool's nodes in it cost.
	SavingsPerHour float64 `json:"savingsPerHour"`
	// DisruptionCost sums RescheduleDisruptionCost over the pool's nodes in the move.
	DisruptionCost float64 `json:"disruptionCost"`
	// PoolCostPerHour and PoolDisruptionCost are the same sums over every node of the pool.
	PoolCostPerHour    float64 `json:"poolCostPerHour"`
	PoolDisruptionCost float64 `json:"poolDisruptionCost"`
	// SavingsFraction is SavingsPerHour / PoolCostPerHour, DisruptionFraction DisruptionCost /
	// PoolDisruptionCost, and Score the first over the second (0 when nothing is saved).
	SavingsFraction    float64 `json:"savingsFraction"`
	DisruptionFraction float64 `json:"disruptionFraction"`
	Score              float64 `json:"score"`
	Approved           bool    `json:"approved"`
}

// Score is the Balanced policy's judgement of one move: approved when every Balanced pool it takes
// nodes from approves it. Pools of other policies are not scored.
type Score struct {
	// Score is the lowest of the pools' scores, the one that decides.
	Score     float64     `json:"score"`
	Threshold float64     `json:"threshold"`
	K         int         `json:"k"`
	Approved  bool        `json:"approved"`
	Pools     []PoolScore `json:"pools"`
}

// ScoredMove is a consolidation move the Balanced policy rejected: what it would have done and its
// score.
type ScoredMove struct {
	Method         Method   `json:"method"`
	Action         Action   `json:"action"`
	Nodes          []string `json:"nodes"`
	SavingsPerHour float64  `json:"savingsPerHour"`
	Score          Score    `json:"score"`
}

// poolTotals are what every node of a Balanced pool costs per hour and the sum of their disruption
// costs: the denominators of its moves' scores.
type poolTotals struct{ cost, disruption float64 }

// balancedTotals sums, for every Balanced pool, the price and the disruption cost of all its nodes
// in the snapshot (initialized or not, disrupting or not: Karpenter counts every node of the pool,
// and non-candidates still weigh in the denominators). It is nil when no pool is Balanced, so other
// clusters pay one pass over the pools. The cost is one pass over the Balanced pools' pods per
// Decide or Validate.
func balancedTotals(pools map[string]NodePool, nodes []*Node) map[string]poolTotals {
	var totals map[string]poolTotals
	for name, p := range pools {
		if p.Policy == Balanced {
			if totals == nil {
				totals = map[string]poolTotals{}
			}
			totals[name] = poolTotals{}
		}
	}
	if totals == nil {
		return nil
	}
	for _, n := range nodes {
		t, ok := totals[n.NodePool]
		if !ok {
			continue
		}
		t.cost += n.Price
		t.disruption += nodeDisruptionCost(n)
		totals[n.NodePool] = t
	}
	return totals
}

// nodeDisruptionCost is RescheduleDisruptionCost of the node's reschedulable pods, without
// collecting them.
func nodeDisruptionCost(n *Node) float64 {
	cost := baseDisruptionCost
	for _, p := range n.Pods {
		if isReschedulable(p) {
			cost += podDisruptionCost(p)
		}
	}
	return cost
}

// scoreMove scores removing cands for savings $/h, or returns nil when none of them is in a
// Balanced pool. A move spanning pools credits each pool with the share of savings its nodes'
// price is of the move's, and is approved only when every Balanced pool approves.
func (e *engine) scoreMove(cands []*candidate, savings float64) *Score {
	if len(e.totals) == 0 {
		return nil
	}
	type part struct{ price, cost float64 }
	parts := map[string]part{}
	source := 0.0
	for _, c := range cands {
		p := parts[c.pool.Name()]
		p.price += c.node.Price
		p.cost += c.cost
		parts[c.pool.Name()] = p
		source += c.node.Price
	}
	var s *Score
	names := make([]string, 0, len(parts))
	for name := range parts {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		t, ok := e.totals[name]
		if !ok {
			continue
		}
		if s == nil {
			s = &Score{K: BalancedK, Threshold: 1.0 / BalancedK, Approved: true, Score: math.Inf(1)}
		}
		p := parts[name]
		credited := savings
		if len(parts) > 1 && source > 0 {
			credited = savings * p.price / source
		}
		ps := poolScore(name, credited, p.cost, t)
		s.Pools = append(s.Pools, ps)
		s.Approved = s.Approved && ps.Approved
		s.Score = min(s.Score, ps.Score)
	}
	return s
}

// poolScore is (savings / pool cost) / (disruption / pool disruption), approved at 1/BalancedK or
// more. With nothing saved, or a pool that costs nothing, the score is 0 (rejected), as in
// Karpenter.
func poolScore(pool string, savings, disruption float64, t poolTotals) PoolScore {
	ps := PoolScore{NodePool: pool, SavingsPerHour: savings, DisruptionCost: disruption,
		PoolCostPerHour: t.cost, PoolDisruptionCost: t.disruption}
	if t.cost > 0 && t.disruption > 0 {
		ps.SavingsFraction, ps.DisruptionFraction = savings/t.cost, disruption/t.disruption
	}
	switch {
	case ps.SavingsFraction <= 0:
	case ps.DisruptionFraction <= 0:
		ps.Score = math.MaxFloat64 // a move disrupts at least its nodes (1 each); kept finite for JSON
	default:
		ps.Score = ps.SavingsFraction / ps.DisruptionFraction
	}
	ps.Approved = ps.Score >= 1.0/BalancedK
	return ps
}

// mayPass is the Balanced pre-filter, Karpenter's CanPassThreshold: deleting cands saves what they
// cost, the most any move of them can save (a replacement costs something, and a pool is credited at
// most its own nodes' price), so when even that deletion is rejected no simulation of them can be
// approved. It returns true when it cannot rule them out, else false and why.
func (e *engine) mayPass(cands []*candidate) (bool, string) {
	if len(e.totals) == 0 {
		return true, ""
	}
	price := 0.0
	for _, c := range cands {
		price += c.node.Price
	}
	s := e.scoreMove(cands, price)
	if s == nil || s.Approved {
		return true, ""
	}
	return false, "the Balanced policy would reject even deleting it, the most any move of it can save: " + s.rejection()
}

// rejection says why a score rejects its move: the first pool below the threshold.
func (s *Score) rejection() string {
	for _, p := range s.Pools {
		if !p.Approved {
			return fmt.Sprintf("NodePool %s scores %s < %.2f (k %d: saves %.1f%% of its cost for %.1f%% of its disruption cost)",
				p.NodePool, below(p.Score, s.Threshold), s.Threshold, s.K, 100*p.SavingsFraction, 100*p.DisruptionFraction)
		}
	}
	return fmt.Sprintf("score %.2f < %.2f", s.Score, s.Threshold)
}

// below words a score under the threshold: two decimals, or as many as it takes not to read as
// the threshold itself.
func below(score, threshold float64) string {
	if v := fmt.Sprintf("%.2f", score); v != fmt.Sprintf("%.2f", threshold) {
		return v
	}
	return strconv.FormatFloat(score, 'f', -1, 64)
}

// approval says why a score approves its move, pool by pool.
func (s *Score) approval() string {
	parts := make([]string, len(s.Pools))
	for i, p := range s.Pools {
		parts[i] = fmt.Sprintf("NodePool %s scores %.2f >= %.2f (k %d: saves %.1f%% of its cost for %.1f%% of its disruption cost)",
			p.NodePool, p.Score, s.Threshold, s.K, 100*p.SavingsFraction, 100*p.DisruptionFraction)
	}
	return "Balanced: " + strings.Join(parts, "; ")
}

// Describe words the score for an operator: "approved: NodePool a scores 0.62 >= 0.50 (...)".
func (s *Score) Describe() string {
	if s.Approved {
		return "approved: " + strings.TrimPrefix(s.approval(), "Balanced: ")
	}
	return "rejected: " + s.rejection()
}

// noteRejected adds a move the Balanced policy rejected to the run's list, up to MaxRejectedMoves.
func (e *engine) noteRejected(m Method, cands []*candidate, o outcome) {
	if o.score == nil || len(e.rejected) >= MaxRejectedMoves {
		return
	}
	names := make([]string, len(cands))
	for i, c := range cands {
		names[i] = c.name()
	}
	slices.SortFunc(names, cmp.Compare[string])
	e.rejected = append(e.rejected, ScoredMove{Method: m, Action: o.action, Nodes: names, SavingsPerHour: o.savings, Score: *o.score})
}

// passes is mayPass without the reason.
func (e *engine) passes(cands []*candidate) bool {
	ok, _ := e.mayPass(cands)
	return ok
}
