package sandbox

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
)

// disruptionConditions are the NodeClaim mirror conditions that show a claim's disruption state, each
// from a mark the claim record dates (see disruptionMarks).
var disruptionConditions = []string{apis.ConditionTypeDrifted, apis.ConditionTypeDisruptionReason, apis.ConditionTypeConsolidatable}

// noteDisruptionState stamps when the mirror first showed each disruption-state condition True with
// each lastTransitionTime; the caller holds mu.
func (w *mirrorWatch) noteDisruptionState(name string, conds map[string]condition, now time.Time) {
	for _, typ := range disruptionConditions {
		c := conds[typ]
		if c.status != metav1.ConditionTrue || c.since.IsZero() {
			continue
		}
		byType := w.shown[name]
		if byType == nil {
			byType = map[string]map[time.Time]time.Time{}
			w.shown[name] = byType
		}
		if byType[typ] == nil {
			byType[typ] = map[time.Time]time.Time{}
		}
		if _, ok := byType[typ][c.since]; !ok {
			byType[typ][c.since] = now
		}
	}
}

// firstShown is when the mirror first showed condition typ True dated at or after since (truncated to
// the second, as conditions are): the record's change, or a later one of the same condition that
// superseded it before the mirror caught up (a candidate that started draining). ok is false when it
// never did.
func (w *mirrorWatch) firstShown(name, typ string, since time.Time) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	from := since.UTC().Truncate(time.Second)
	var first time.Time
	for ltt, seen := range w.shown[name][typ] {
		if !ltt.Before(from) && (first.IsZero() || seen.Before(first)) {
			first = seen
		}
	}
	return first, !first.IsZero()
}

// mirrorLagTarget names the mirrors' lag target in a report's targetsMet; mirrorLagMet is it: a p99 of
// at most 10 s over at least one change.
const mirrorLagTarget = "mirrorLagP99<=10s"

func mirrorLagMet(p Percentiles) bool { return p.N > 0 && p.P99 <= 10 }

// disruptionMark is one disruption-state change a claim record dates.
type disruptionMark struct {
	condition string
	at        time.Time
}

// disruptionMarks are the disruption-state changes claim c records: its Drifted condition set, a
// disruption command's mark (DisruptionReason on the mirror) and its Consolidatable mark.
func disruptionMarks(c state.Claim) []disruptionMark {
	var out []disruptionMark
	if d := c.Drifted; d != nil {
		out = append(out, disruptionMark{apis.ConditionTypeDrifted, d.Since})
	}
	if m := c.Disrupting; m != nil {
		out = append(out, disruptionMark{apis.ConditionTypeDisruptionReason, m.Since})
	}
	if m := c.Consolidatable; m != nil {
		out = append(out, disruptionMark{apis.ConditionTypeConsolidatable, m.Since})
	}
	return out
}

// disruptionMirrorLag is, for every disruption-state change a claim record holds (live claims and
// deleted ones) dated from since on, the time from the change to its mirror first showing it, as the
// administrator's watch saw it (the watch the scale-up's mirrorLagSeconds is measured with). A change
// never shown counts the time until now. A record holds a mark's latest setting: a Consolidatable mark
// cleared and set again counts once, from its last setting.
func (s *Sandbox) disruptionMirrorLag(ctx context.Context, w *mirrorWatch, since time.Time) (Percentiles, error) {
	claims, err := s.Store.ListAllClaims(ctx)
	if err != nil {
		return Percentiles{}, err
	}
	now := time.Now()
	var lags []time.Duration
	for _, c := range claims {
		for _, m := range disruptionMarks(c) {
			if m.at.Before(since) {
				continue
			}
			seen, ok := w.firstShown(c.Name, m.condition, m.at)
			if !ok {
				seen = now
				s.Timeline.Printf("mirrors", "nodeclaims.nodewright.sh/%s never showed %s of %s", c.Name, m.condition, m.at.UTC().Format(time.RFC3339))
			}
			lag := max(seen.Sub(m.at), 0)
			lags = append(lags, lag)
			if ok && lag > 5*time.Second {
				s.Timeline.Printf("mirrors", "nodeclaims.nodewright.sh/%s showed %s of %s after %.1fs", c.Name, m.condition,
					m.at.UTC().Format(time.RFC3339), lag.Seconds())
			}
		}
	}
	return percentiles(lags), nil
}
