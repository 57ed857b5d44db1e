package sqsbatch

import (
	"context"
	"math/rand/v2"
	"time"
)

// Defaults of Policy.
const (
	DefaultAttempts      = 3
	DefaultBaseDelay     = 100 * time.Millisecond
	DefaultMaxDelay      = 2 * time.Second
	DefaultReserve       = 3 * time.Second
	DefaultMinVisibility = 2 * time.Second
	DefaultMaxVisibility = 30 * time.Second
)

// Policy is how a batch's messages are retried inside one invocation. Zero fields take the defaults.
type Policy struct {
	// Attempts bounds the tries of one message in one invocation, the first included.
	Attempts int
	// BaseDelay and MaxDelay bound the backoff before the next try: a uniformly random wait up to
	// BaseDelay·2^(try-1), at most MaxDelay.
	BaseDelay, MaxDelay time.Duration
	// Reserve is the time kept before the context's deadline: no try starts, and no backoff waits, past
	// deadline−Reserve, so the handler can still answer and requeue what failed.
	Reserve time.Duration
	// MinVisibility and MaxVisibility bound how long a failed message stays invisible: MinVisibility
	// after its first receive, doubling with each receive.
	MinVisibility, MaxVisibility time.Duration
	// Rand draws the jitter in [0, 1) (default math/rand/v2); Sleep waits (default a timer that stops
	// when ctx ends). Tests set both.
	Rand  func() float64
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the clock the deadline is compared with (default time.Now).
	Now func() time.Time
}

func (p Policy) withDefaults() Policy {
	if p.Attempts <= 0 {
		p.Attempts = DefaultAttempts
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = DefaultBaseDelay
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = DefaultMaxDelay
	}
	if p.Reserve <= 0 {
		p.Reserve = DefaultReserve
	}
	if p.MinVisibility <= 0 {
		p.MinVisibility = DefaultMinVisibility
	}
	if p.MaxVisibility <= 0 {
		p.MaxVisibility = DefaultMaxVisibility
	}
	if p.Rand == nil {
		p.Rand = rand.Float64
	}
	if p.Sleep == nil {
		p.Sleep = sleep
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	return p
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// HasTime reports whether ctx leaves room to start work: more than Reserve before its deadline (always,
// without one) and not cancelled.
func (p Policy) HasTime(ctx context.Context) bool {
	p = p.withDefaults()
	if ctx.Err() != nil {
		return false
	}
	deadline, ok := ctx.Deadline()
	return !ok || deadline.Sub(p.Now()) > p.Reserve
}

// Do runs try until it succeeds, fails for a reason retryable does not accept, has run Attempts times,
// or the next try could not start (after its backoff) before deadline−Reserve. It returns try's last
// error and how many times it ran.
func (p Policy) Do(ctx context.Context, try func(context.Context) error, retryable func(error) bool) (int, error) {
	p = p.withDefaults()
	var err error
	for n := 1; ; n++ {
		if err = try(ctx); err == nil || n == p.Attempts || !retryable(err) {
			return n, err
		}
		wait := p.backoff(n)
		if deadline, ok := ctx.Deadline(); ok && !p.Now().Add(wait).Before(deadline.Add(-p.Reserve)) {
			return n, err
		}
		if p.Sleep(ctx, wait) != nil {
			return n, err
		}
	}
}

// backoff is the wait after the n-th try: full jitter over BaseDelay·2^(n-1), capped at MaxDelay.
func (p Policy) backoff(n int) time.Duration {
	ceiling := p.BaseDelay
	for i := 1; i < n && ceiling < p.MaxDelay; i++ {
		ceiling *= 2
	}
	return time.Duration(p.Rand() * float64(min(ceiling, p.MaxDelay)))
}
