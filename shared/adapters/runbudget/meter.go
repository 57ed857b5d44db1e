package runbudget

import (
	"context"
	"sync"
	"time"
)

// headroom is what the next run is assumed to need beyond the last one's measured duration: half as
// much again, for a run over more work than the last (a grown backlog, a busier API server) and for the
// variance of reads over the network.
func headroom(d time.Duration) time.Duration { return d + d/2 }

// Meter remembers the duration of the last run of one kind in this process. Safe for concurrent use;
// the zero value has measured nothing.
type Meter struct {
	mu       sync.Mutex
	last     time.Duration
	measured bool
}

// Observe records a run's duration; a negative one (a clock set back) counts as zero.
func (m *Meter) Observe(d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.last, m.measured = max(d, 0), true
}

// Last is the last observed duration, and whether there was one.
func (m *Meter) Last() (time.Duration, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.last, m.measured
}

// Needs is the time another run needs: the last run's duration (cold when none was measured) with
// headroom, and never less than floor (the caller's own margin before a deadline).
func (m *Meter) Needs(cold, floor time.Duration) time.Duration {
	est, ok := m.Last()
	if !ok {
		est = cold
	}
	return max(floor, headroom(est))
}

// Fits reports whether another run may start at now: ctx is not done, and it has no deadline or one at
// least Needs(cold, floor) away.
func (m *Meter) Fits(ctx context.Context, now time.Time, cold, floor time.Duration) bool {
	if ctx.Err() != nil {
		return false
	}
	deadline, ok := ctx.Deadline()
	return !ok || deadline.Sub(now) >= m.Needs(cold, floor)
}
