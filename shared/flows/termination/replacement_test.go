package termination

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

func TestGateWaitsForReplacementWithinBounds(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 14, 0, 0, 0, time.UTC)
	draining := state.Claim{Name: "old", Lifecycle: state.Draining, DrainingAt: &t0}
	at := func(d time.Duration) *time.Time { v := t0.Add(d); return &v }
	replacement := func(l state.Lifecycle, created time.Duration, initialized bool) state.Claim {
		c := state.Claim{Name: "new", Lifecycle: l, CreatedAt: t0.Add(created), Replaces: []string{"old"}}
		if initialized {
			c.InitializedAt = at(created + time.Minute)
		}
		return c
	}
	notice := at(2 * time.Minute)
	tests := []struct {
		name     string
		mark     time.Time
		others   []state.Claim
		deadline *time.Time
		now      time.Time
		wait     bool
		why      string
	}{
		{name: "no provisioning run since the drain began", mark: t0.Add(-time.Second), now: t0.Add(time.Second), wait: true, why: "provisioning run"},
		{name: "a run placed the pods on existing capacity", mark: t0.Add(time.Second), now: t0.Add(2 * time.Second)},
		{name: "the replacement is still launching", mark: t0.Add(time.Second), others: []state.Claim{replacement(state.Launched, time.Second, false)},
			now: t0.Add(3 * time.Second), wait: true, why: "replacement new (launched)"},
		{name: "the replacement initialized", mark: t0.Add(time.Second), others: []state.Claim{replacement(state.Initialized, time.Second, true)},
			now: t0.Add(40 * time.Second)},
		{name: "a claim launched for other pods is not a replacement", mark: t0.Add(time.Second),
			others: []state.Claim{{Name: "unrelated", Lifecycle: state.Launched, CreatedAt: t0.Add(time.Second)}}, now: t0.Add(3 * time.Second)},
		{name: "the replacement of another drain is not this one's", mark: t0.Add(time.Second),
			others: []state.Claim{{Name: "theirs", Lifecycle: state.Pending, CreatedAt: t0.Add(time.Second), Replaces: []string{"other"}}},
			now:    t0.Add(3 * time.Second)},
		{name: "a registered replacement still holds the drain", mark: t0.Add(time.Second), others: []state.Claim{replacement(state.Registered, time.Second, false)},
			now: t0.Add(3 * time.Second), wait: true, why: "replacement new (registered)"},
		{name: "a spot notice leaves the reserve for the drain", mark: t0.Add(-time.Second), deadline: notice, now: t0.Add(75 * time.Second)},
		{name: "within the notice the gate still waits", mark: t0.Add(-time.Second), deadline: notice, now: t0.Add(74 * time.Second), wait: true},
		{name: "without a deadline the wait is bounded too", mark: t0.Add(-time.Second), now: t0.Add(DefaultReplacementWait)},
		{name: "a deadline days away does not stretch the wait", mark: t0.Add(-time.Second), deadline: at(48 * time.Hour),
			now: t0.Add(DefaultReplacementWait)},
		{name: "a replacement still launching holds the drain only up to the bound", mark: t0.Add(time.Second), deadline: at(48 * time.Hour),
			others: []state.Claim{replacement(state.Launched, time.Second, false)}, now: t0.Add(DefaultReplacementWait)},
		{name: "before the bound a far deadline still waits", mark: t0.Add(-time.Second), deadline: at(48 * time.Hour),
			now: t0.Add(DefaultReplacementWait - time.Second), wait: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := &claimStore{claims: map[string]state.Claim{"old": draining}, mark: tt.mark}
			for _, c := range tt.others {
				store.claims[c.Name] = c
			}
			s := NewService(Config{QueueURL: "q"}, Deps{Store: store})
			wait, why, err := s.gate(context.Background(), draining, tt.deadline, tt.now)
			require.NoError(t, err)
			assert.Equal(t, tt.wait, wait, why)
			assert.Contains(t, why, tt.why)
		})
	}
}
