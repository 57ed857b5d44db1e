package sandbox

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/nodewright/nodewright/shared/core/disruption"
)

// ExpiryOptions shape the expiry scenario.
type ExpiryOptions struct {
	// ScaleUpOptions shape the scale-up that builds the cluster first (default 30 replicas).
	ScaleUpOptions
	// Timeout bounds the wait, from the disruption function's start, for every original node to expire
	// and go (default 7 minutes: the nodes live ExpireAfter first).
	Timeout time.Duration
}

func (o *ExpiryOptions) defaults() {
	o.ScaleUpOptions.defaults()
	if o.Timeout <= 0 {
		o.Timeout = 7 * time.Minute
	}
}

// expiryAfter is the expiry scenario's NodePool expireAfter.
const expiryAfter = 2 * time.Minute

// expiryPoolConfig is the expiry scenario's NodePool: the consolidation scenario's pool whose nodes
// expire expiryAfter after launch, with consolidateAfter Never so only expiry removes them.
var expiryPoolConfig = narrowPoolConfig("", "2m", "Never")

// ExpiryReport is the expiry scenario's outcome. Expiry ignores budgets (Karpenter's forceful
// methods), so its BudgetAllowed and BudgetExceededSamples, for reason Expired, are not targets.
type ExpiryReport struct {
	RollReport
	ExpireAfter string `json:"expireAfter"`
	// ExpiredNodes: original nodes removed by a command of reason Expired.
	ExpiredNodes int `json:"expiredNodes"`
	// ReplacementLaunchedBeforeDrain: every expired original node's command launched replacements that
	// were launched and initialized before the node's claim began draining. ExpiredWithoutReplacement
	// names the expired nodes whose command launched none (counted as not met); ReplacementOrder says,
	// per expired node, when its replacements launched and initialized and when it began draining.
	ReplacementLaunchedBeforeDrain bool     `json:"replacementLaunchedBeforeDrain"`
	ExpiredWithoutReplacement      []string `json:"expiredWithoutReplacement,omitempty"`
	ReplacementOrder               []string `json:"replacementOrder,omitempty"`
	// ExpirySeconds: from the disruption function's start to the last original node gone (-1: not all
	// went).
	ExpirySeconds float64 `json:"expirySeconds"`
	// LastExpiredToGoneSeconds: from the moment the last original node to expire expired (its claim's
	// launch plus the expireAfter stamped on it) to the last original node gone (-1: unknown).
	LastExpiredToGoneSeconds float64 `json:"lastExpiredToGoneSeconds"`
}

// Expiry runs the expiry scenario: inflate scales up on a pool whose nodes expire after two minutes, the
// disruption function is deployed, and every original node is removed when it expires, with replacement
// capacity launched first.
func (s *Sandbox) Expiry(ctx context.Context, o ExpiryOptions) (ExpiryReport, error) {
	o.defaults()
	rep := ExpiryReport{RollReport: RollReport{Scenario: "expiry", NodePool: ConsolidationNodePool, BudgetAllowed: -1,
		SampleEveryMillis: int(consolidationSampleEvery.Milliseconds())}, ExpireAfter: expiryAfter.String(), ExpirySeconds: -1,
		LastExpiredToGoneSeconds: -1}
	start := time.Now()
	w, err := s.setUpRoll(ctx, expiryPoolConfig, disruption.ReasonExpired, o.ScaleUpOptions, &rep.RollReport)
	if err != nil {
		return rep, err
	}
	errsBefore := len(s.Errors())
	s.Timeline.Restart()
	begin := time.Now()
	s.Timeline.Printf("scenario", "%d nodes of NodePool %s expire %s after launch; waiting for them to go", rep.NodesBefore, rep.NodePool, expiryAfter)
	lastGone, err := s.followRoll(ctx, w, begin.Add(o.Timeout), &rep.RollReport)
	if err != nil {
		return rep, err
	}
	if !lastGone.IsZero() {
		rep.ExpirySeconds = round3(lastGone.Sub(begin).Seconds())
		if expired, ok := lastExpiry(w); ok {
			rep.LastExpiredToGoneSeconds = round3(lastGone.Sub(expired).Seconds())
		}
	}
	rep.DurationSeconds = round3(time.Since(start).Seconds())
	s.settle(ctx)
	if err := s.finishRoll(ctx, w, &rep.RollReport, begin, errsBefore); err != nil {
		return rep, err
	}
	s.judgeExpiry(w, &rep)
	return rep, nil
}

// judgeExpiry fills the expiry-specific figures and the targets.
func (s *Sandbox) judgeExpiry(w *rollWatch, rep *ExpiryReport) {
	commandOf := map[string]ConsolidationCommand{}
	for _, c := range rep.Commands {
		if c.Reason != string(disruption.ReasonExpired) {
			continue
		}
		for _, n := range c.Nodes {
			commandOf[n] = c
		}
	}
	ordered := 0
	for _, node := range w.originalNames() {
		cmd, expired := commandOf[node]
		if _, gone := w.gone[node]; !gone || !expired {
			continue
		}
		rep.ExpiredNodes++
		if len(cmd.Replacements) == 0 {
			rep.ExpiredWithoutReplacement = append(rep.ExpiredWithoutReplacement, node)
			continue
		}
		orig := w.claims[w.originals[node]]
		ok := orig.DrainingAt != nil
		var launched, initialized *time.Time
		for _, name := range cmd.Replacements {
			r, seen := w.claims[name]
			ok = ok && seen && r.LaunchedAt != nil && r.InitializedAt != nil &&
				!r.LaunchedAt.After(*orig.DrainingAt) && !r.InitializedAt.After(*orig.DrainingAt)
			launched, initialized = latest(launched, r.LaunchedAt), latest(initialized, r.InitializedAt)
		}
		line := fmt.Sprintf("%s: draining %s; command %s's %d replacements launched by %s, initialized by %s",
			node, stamp(orig.DrainingAt), cmd.ID, len(cmd.Replacements), stamp(launched), stamp(initialized))
		rep.ReplacementOrder = append(rep.ReplacementOrder, line)
		if ok {
			ordered++
		}
	}
	sort.Strings(rep.ExpiredWithoutReplacement)
	rep.ReplacementLaunchedBeforeDrain = rep.ExpiredNodes > 0 && ordered == rep.ExpiredNodes
	onlyExpiry := len(rep.Commands) > 0
	for _, c := range rep.Commands {
		onlyExpiry = onlyExpiry && c.Reason == string(disruption.ReasonExpired)
	}
	rep.TargetsMet = map[string]bool{
		"expiredNodes=nodesBefore":       rep.NodesBefore > 0 && rep.ExpiredNodes == rep.NodesBefore,
		"replacementLaunchedBeforeDrain": rep.ReplacementLaunchedBeforeDrain,
		"podsLost=0":                     rep.PodsLost == 0,
		"noPodUnbound":                   rep.PodsUnbound == 0,
		"noLeakedInstances":              rep.LeakedInstances == 0 && len(rep.Leaks) == 0,
		"onlyExpiryCommands":             onlyExpiry,
		"noRolledBack":                   rep.RolledBack == 0,
	}
	s.Timeline.Printf("scenario", "done: %d of %d original nodes expired and went in %.1fs; replacements first: %t; pods lost %d; leaked %d; targets missed: %s",
		rep.ExpiredNodes, rep.NodesBefore, rep.ExpirySeconds, rep.ReplacementLaunchedBeforeDrain, rep.PodsLost, rep.LeakedInstances,
		strings.Join(missedTargets(rep.TargetsMet), ", "))
}

// lastExpiry is when the last of the original claims expired (false: a claim's expireAfter unknown).
func lastExpiry(w *rollWatch) (time.Time, bool) {
	var last time.Time
	for _, name := range w.originals {
		c := w.claims[name]
		d, err := time.ParseDuration(c.ExpireAfter)
		if err != nil {
			return time.Time{}, false
		}
		if at := c.CreatedAt.Add(d); at.After(last) {
			last = at
		}
	}
	return last, !last.IsZero()
}

// latest is the later of a and b (nil counts as unknown: a nil b keeps a, and a nil a takes b).
func latest(a, b *time.Time) *time.Time {
	if a == nil || (b != nil && b.After(*a)) {
		return b
	}
	return a
}

// stamp prints t to the millisecond ("-" when nil).
func stamp(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format("15:04:05.000")
}
