package sqsbatch

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// clock is a fake time that Sleep advances.
type clock struct{ now time.Time }

func (c *clock) policy(p Policy) Policy {
	p.Now = func() time.Time { return c.now }
	p.Sleep = func(_ context.Context, d time.Duration) error { c.now = c.now.Add(d); return nil }
	p.Rand = func() float64 { return 0.5 }
	return p
}

var errTransient = errors.New("throttled")

func TestDoRetriesTransientFailuresWithGrowingBackoff(t *testing.T) {
	c := &clock{now: time.Unix(0, 0)}
	var waits []time.Duration
	p := c.policy(Policy{Attempts: 4, BaseDelay: 100 * time.Millisecond, MaxDelay: 300 * time.Millisecond})
	last := c.now
	tries, err := p.Do(context.Background(), func(context.Context) error {
		waits = append(waits, c.now.Sub(last))
		last = c.now
		return errTransient
	}, func(error) bool { return true })
	assert.ErrorIs(t, err, errTransient)
	assert.Equal(t, 4, tries)
	assert.Equal(t, []time.Duration{0, 50 * time.Millisecond, 100 * time.Millisecond, 150 * time.Millisecond}, waits,
		"half of 100, 200, then the 300 cap (Rand 0.5)")

	calls := 0
	tries, err = p.Do(context.Background(), func(context.Context) error {
		if calls++; calls < 2 {
			return errTransient
		}
		return nil
	}, func(error) bool { return true })
	require.NoError(t, err)
	assert.Equal(t, 2, tries, "a success ends the tries")
}

func TestDoStopsOnAFailureThatIsNotRetryable(t *testing.T) {
	c := &clock{now: time.Unix(0, 0)}
	permanent := errors.New("in progress elsewhere")
	tries, err := c.policy(Policy{}).Do(context.Background(), func(context.Context) error { return permanent },
		func(err error) bool { return !errors.Is(err, permanent) })
	assert.ErrorIs(t, err, permanent)
	assert.Equal(t, 1, tries)
}

// TestDoKeepsTheReserve: no try starts, and no backoff waits, past deadline−Reserve.
func TestDoKeepsTheReserve(t *testing.T) {
	start := time.Now() // the context's deadline runs on the real clock too
	c := &clock{now: start}
	ctx, cancel := context.WithDeadline(context.Background(), c.now.Add(4*time.Second))
	defer cancel()
	p := c.policy(Policy{Attempts: 100, BaseDelay: time.Second, MaxDelay: time.Second, Reserve: 2 * time.Second})
	tries, err := p.Do(ctx, func(context.Context) error { return errTransient }, func(error) bool { return true })
	assert.ErrorIs(t, err, errTransient)
	assert.Equal(t, 4, tries, "tries at 0, 0.5, 1 and 1.5 s; a fifth would start at 2 s, inside the reserve")
	c.now = start.Add(2 * time.Second)
	assert.False(t, p.HasTime(ctx), "2 s before the deadline is the reserve")
	c.now = start
	assert.True(t, p.HasTime(ctx))
	assert.True(t, p.HasTime(context.Background()), "no deadline, always time")
	cancel()
	assert.False(t, p.HasTime(ctx), "a cancelled context has no time")
}

func TestVisibilityGrowsWithReceives(t *testing.T) {
	p := Policy{MinVisibility: 2 * time.Second, MaxVisibility: 20 * time.Second}
	var got []time.Duration
	for n := 0; n <= 6; n++ {
		got = append(got, p.Visibility(n))
	}
	assert.Equal(t, []time.Duration{2 * time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second,
		20 * time.Second, 20 * time.Second}, got)
}
