package main

import (
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// skipClock is the clock Karpenter's disruption controller runs on in the comparison: it follows
// the wall clock, so that Karpenter's own timeouts (a minute for multi-node consolidation, three for
// single-node) cut its searches as in a real cluster, but every wait (the 15 s validation period of a
// consolidation command, a timer) returns at once and moves the clock forward by its length instead.
// Step moves it forward between passes (nominations expire, budgets and consolidation state refresh).
type skipClock struct {
	mu      sync.Mutex
	skipped time.Duration
}

var _ clock.Clock = (*skipClock)(nil)

func (c *skipClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.skipped)
}

func (c *skipClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// Step moves the clock forward by d without waiting.
func (c *skipClock) Step(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.skipped += d
}

// Skipped is how far the clock is ahead of the wall clock.
func (c *skipClock) Skipped() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.skipped
}

// After steps the clock by d and returns a channel that already holds the new time.
func (c *skipClock) After(d time.Duration) <-chan time.Time {
	c.Step(d)
	ch := make(chan time.Time, 1)
	ch <- c.Now()
	return ch
}

func (c *skipClock) NewTimer(d time.Duration) clock.Timer {
	t := &firedTimer{clk: c, c: make(chan time.Time, 1)}
	t.Reset(d)
	return t
}

func (c *skipClock) Sleep(d time.Duration) { c.Step(d) }

// Tick is a wall-clock ticker: nothing on the disruption path polls with it.
func (c *skipClock) Tick(d time.Duration) <-chan time.Time { return time.Tick(d) }

// firedTimer is a timer of skipClock: it fires as soon as it is set.
type firedTimer struct {
	clk *skipClock
	c   chan time.Time
}

func (t *firedTimer) C() <-chan time.Time { return t.c }

// Stop reports false: the timer has always fired already.
func (t *firedTimer) Stop() bool { return false }

func (t *firedTimer) Reset(d time.Duration) bool {
	t.clk.Step(d)
	select {
	case t.c <- t.clk.Now():
	default:
	}
	return false
}
