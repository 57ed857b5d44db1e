package pricing

import (
	"sync"
	"time"
)

// ReadGate lets a stored price table be read at most once per interval however many runs ask, and
// makes concurrent runs share that one read. The zero value is not usable; see NewReadGate.
type ReadGate struct {
	every time.Duration
	now   func() time.Time

	mu   sync.Mutex
	read time.Time // when the table was last read, successfully or not
}

// NewReadGate opens at most once per every (fallback when not positive), on the clock now.
func NewReadGate(every, fallback time.Duration, now func() time.Time) *ReadGate {
	if every <= 0 {
		every = fallback
	}
	return &ReadGate{every: every, now: now}
}

// Do runs read unless the last read began less than the interval ago, in which case it reports
// (false, nil). A failed read counts: it is not retried before the interval is over either.
func (g *ReadGate) Do(read func() (bool, error)) (bool, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	if !g.read.IsZero() && now.Sub(g.read) < g.every {
		return false, nil
	}
	g.read = now
	return read()
}
