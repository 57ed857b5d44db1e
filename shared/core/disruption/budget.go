package disruption

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// DefaultBudgets returns what a NodePool without budgets gets: at most 10% of its nodes at once.
func DefaultBudgets() []Budget { return []Budget{{Nodes: "10%"}} }

// unlimited is the allowance of a pool no active budget limits (Karpenter's MaxInt32).
const unlimited = math.MaxInt32

// AllowedDisruptions returns how many more nodes of the pool may be disrupted for reason at now:
// the minimum over the pool's active budgets that apply to the reason (their reasons are empty or
// contain it) of the budget's node count, a percentage of nodes rounded up, minus the nodes already
// disrupting, floored at 0. nodes counts the pool's managed, initialized nodes (disrupting ones
// included). A budget that cannot be read allows 0: a typo must not let everything go at once.
// With no applicable active budget the answer is math.MaxInt32 minus disrupting.
func AllowedDisruptions(pool NodePool, reason Reason, now time.Time, nodes, disrupting int) int {
	return max(budgetAllows(pool, reason, now, nodes)-disrupting, 0)
}

// budgetAllows is AllowedDisruptions before nodes already disrupting are subtracted.
func budgetAllows(pool NodePool, reason Reason, now time.Time, nodes int) int {
	budgets := pool.Budgets
	if budgets == nil {
		budgets = DefaultBudgets()
	}
	allowed := unlimited
	for _, b := range budgets {
		if len(b.Reasons) > 0 && !slices.Contains(b.Reasons, reason) {
			continue
		}
		n, err := b.allows(now, nodes)
		if err != nil {
			return 0
		}
		allowed = min(allowed, n)
	}
	return allowed
}

// Active reports whether the budget is in force at now: always without a schedule, otherwise iff
// the schedule's last hit is at most Duration before now (its next hit after now-Duration is not
// after now). The schedule is a standard five-field cron expression (or @daily...) read in UTC.
func (b Budget) Active(now time.Time) (bool, error) {
	if b.Schedule == "" {
		if b.Duration != 0 {
			return false, fmt.Errorf("budget has a duration but no schedule")
		}
		return true, nil
	}
	sched, err := cron.ParseStandard("TZ=UTC " + b.Schedule)
	if err != nil {
		return false, fmt.Errorf("budget schedule %q: %w", b.Schedule, err)
	}
	next := sched.Next(now.Add(-b.Duration))
	return !next.After(now), nil
}

// allows returns how many of nodes the budget lets be disrupted at now: unlimited when it is not
// active, its count, or its percentage of nodes rounded up.
func (b Budget) allows(now time.Time, nodes int) (int, error) {
	active, err := b.Active(now)
	if err != nil {
		return 0, err
	}
	if !active {
		return unlimited, nil
	}
	return scaleNodes(b.Nodes, nodes)
}

// scaleNodes reads a budget's nodes: a non-negative integer, or an integer percentage from 0% to
// 100% of total, rounded up.
func scaleNodes(s string, total int) (int, error) {
	if pct, ok := strings.CutSuffix(s, "%"); ok {
		p, err := strconv.Atoi(pct)
		if err != nil || p < 0 || p > 100 || pct != strconv.Itoa(p) {
			return 0, fmt.Errorf("budget nodes %q is not a percentage from 0%% to 100%%", s)
		}
		return (p*total + 99) / 100, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || s != strconv.Itoa(n) {
		return 0, fmt.Errorf("budget nodes %q is not a non-negative integer or percentage", s)
	}
	return n, nil
}

// budgets tracks, during one Decide, how many more nodes each pool may lose for each reason.
type budgets struct {
	now        time.Time
	pools      map[string]NodePool
	nodes      map[string]int
	disrupting map[string]int
	taken      map[budgetKey]int
}

type budgetKey struct {
	pool   string
	reason Reason
}

// newBudgets counts each pool's managed, initialized nodes and those of them already disrupting
// (marked, deleting or not Ready).
func newBudgets(in *Input, pools map[string]NodePool) *budgets {
	b := &budgets{now: in.Now, pools: pools, nodes: map[string]int{}, disrupting: map[string]int{}, taken: map[budgetKey]int{}}
	for i := range in.Nodes {
		n := &in.Nodes[i]
		if n.NodePool == "" || !n.Initialized {
			continue
		}
		b.nodes[n.NodePool]++
		if isDisrupting(n) || !nodeReady(n) {
			b.disrupting[n.NodePool]++
		}
	}
	return b
}

// left returns how many more nodes of pool may be disrupted for reason in this run.
func (b *budgets) left(pool string, reason Reason) int {
	p, ok := b.pools[pool]
	if !ok {
		return 0
	}
	return max(AllowedDisruptions(p, reason, b.now, b.nodes[pool], b.disrupting[pool])-b.taken[budgetKey{pool, reason}], 0)
}

// take uses one disruption of pool's budget for reason.
func (b *budgets) take(pool string, reason Reason) { b.taken[budgetKey{pool, reason}]++ }
