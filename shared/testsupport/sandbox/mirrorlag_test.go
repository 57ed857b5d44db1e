package sandbox

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
)

// TestDisruptionLagCountsFromTheRecordToTheMirrorShowingIt: the drift and consolidation reports'
// mirrorLagSeconds takes each disruption-state change from the claim record (Drifted, the disrupting
// mark, Consolidatable) and the watch's first sight of the mirror showing that change, or a later one of
// the same condition (a candidate that began draining before its mirror caught up); a mirror that never
// showed it does not count as shown.
func TestDisruptionLagCountsFromTheRecordToTheMirrorShowingIt(t *testing.T) {
	at := time.Date(2026, 12, 2, 8, 0, 0, 400_000_000, time.UTC)
	c := state.Claim{Name: "default-abcde", Drifted: &state.DriftCondition{Reason: "AMIDrift", Since: at},
		Disrupting:     &state.DisruptingMark{Command: "run-1", Reason: "Drifted", Since: at.Add(10 * time.Second)},
		Consolidatable: &state.ConsolidatableMark{Since: at.Add(20 * time.Second)}}
	marks := disruptionMarks(c)
	require.Len(t, marks, 3)

	w := &mirrorWatch{shown: map[string]map[string]map[time.Time]time.Time{}}
	second := func(t time.Time) time.Time { return t.Truncate(time.Second) }
	w.noteDisruptionState(c.Name, map[string]condition{apis.ConditionTypeDrifted: {status: "True", since: second(at)}}, at.Add(2*time.Second))
	w.noteDisruptionState(c.Name, map[string]condition{apis.ConditionTypeDrifted: {status: "True", since: second(at)}}, at.Add(9*time.Second))
	// The drain's DisruptionReason (dated later) was the first the mirror showed of that condition.
	w.noteDisruptionState(c.Name, map[string]condition{apis.ConditionTypeDisruptionReason: {status: "True", since: second(at.Add(12 * time.Second))}},
		at.Add(13*time.Second))

	seen, ok := w.firstShown(c.Name, apis.ConditionTypeDrifted, at)
	require.True(t, ok)
	assert.Equal(t, at.Add(2*time.Second), seen, "the first sight, not a later event of the same condition")
	seen, ok = w.firstShown(c.Name, apis.ConditionTypeDisruptionReason, at.Add(10*time.Second))
	require.True(t, ok)
	assert.Equal(t, at.Add(13*time.Second), seen, "a later state of the condition stands for the mark it superseded")
	_, ok = w.firstShown(c.Name, apis.ConditionTypeConsolidatable, at.Add(20*time.Second))
	assert.False(t, ok, "never shown")
	_, ok = w.firstShown(c.Name, apis.ConditionTypeDrifted, at.Add(time.Minute))
	assert.False(t, ok, "a condition dated before the change does not show it")

	assert.True(t, mirrorLagMet(Percentiles{P99: 10, N: 3}))
	assert.False(t, mirrorLagMet(Percentiles{P99: 10.2, N: 3}))
	assert.False(t, mirrorLagMet(Percentiles{}), "no change measured is no target met")
}
