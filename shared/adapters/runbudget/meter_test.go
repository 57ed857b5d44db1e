package runbudget

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestAColdMeterAssumesTheConservativeEstimate(t *testing.T) {
	var m Meter
	_, ok := m.Last()
	assert.False(t, ok)
	assert.Equal(t, 45*time.Second, m.Needs(30*time.Second, 20*time.Second), "the cold estimate with headroom")
	assert.Equal(t, 20*time.Second, m.Needs(5*time.Second, 20*time.Second), "never below the floor")
}

func TestAnotherRunStartsOnlyIfTheLastOneWouldFit(t *testing.T) {
	now := time.Now() // the context's own timer must not fire first
	ctx, cancel := context.WithDeadline(context.Background(), now.Add(35*time.Second))
	defer cancel()
	var m Meter
	m.Observe(25 * time.Second) // a run at 150,000 pods
	assert.Equal(t, 37500*time.Millisecond, m.Needs(30*time.Second, 20*time.Second))
	assert.False(t, m.Fits(ctx, now, 30*time.Second, 20*time.Second), "35 s left is more than the 20 s floor, less than the run needs")

	m.Observe(4 * time.Second) // a sandbox-sized run
	assert.True(t, m.Fits(ctx, now, 30*time.Second, 20*time.Second))
	assert.False(t, m.Fits(ctx, now.Add(16*time.Second), 30*time.Second, 20*time.Second), "the floor still holds")

	m.Observe(-time.Second)
	last, ok := m.Last()
	assert.True(t, ok)
	assert.Zero(t, last, "a clock set back measures nothing negative")

	assert.True(t, m.Fits(context.Background(), now, time.Hour, time.Hour), "no deadline: always")
	done, stop := context.WithCancel(context.Background())
	stop()
	assert.False(t, m.Fits(done, now, 0, 0), "a cancelled context: never")
}
