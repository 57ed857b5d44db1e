package state

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nodewright/nodewright/shared/adapters/crash"
)

// Leaser takes and gives back leases; *Store satisfies it.
type Leaser interface {
	AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (Lease, error)
	ReleaseLease(ctx context.Context, l Lease) error
}

var _ Leaser = (*Store)(nil)

// LeaseTTLFor is how long a run started at now under ctx holds its lease: until ctx's deadline — a
// Lambda's deadline is its timeout, past which the invocation is gone and cannot release anything — or
// fallback when ctx has none (a CLI or test run).
func LeaseTTLFor(ctx context.Context, now time.Time, fallback time.Duration) time.Duration {
	if deadline, ok := ctx.Deadline(); ok {
		return max(deadline.Sub(now), time.Millisecond)
	}
	return fallback
}

// LeasedRun is what RunLeased tells of the lease besides the body's error.
type LeasedRun struct {
	// Held is false when someone else held the lease: the body did not run.
	Held bool
	// NotReleased is why the lease could not be given back within LeaseReleaseBudget (nil when it was).
	// It is not the run's error: the body's work is done and recorded, and the lease ends by itself at
	// its expiry, the invocation's deadline (LeaseTTLFor), so the next run waits at most that long. A run
	// reports it as a warning; counting it as a failure would fail runs that did all their work whenever
	// the table answered slowly at the very end.
	NotReleased error
}

// RunLeased runs body holding lease name as holder for ttl (see LeaseTTLFor) and gives the lease back on
// every way out of body: a return, an error, or a panic, which it recovers and returns as a
// *crash.PanicError, so a crash on the run's goroutine never leaves the next trigger coalescing into a
// lease nobody holds. The error is acquiring's or the body's; when someone else holds the lease,
// LeasedRun.Held is false, with no error, and body does not run. what names the lease in errors ("the
// provisioner lease").
func RunLeased(ctx context.Context, l Leaser, name, holder, what string, ttl time.Duration, body func() error) (run LeasedRun, err error) {
	lease, err := l.AcquireLease(ctx, name, holder, ttl)
	if errors.Is(err, ErrLeaseHeld) {
		return LeasedRun{}, nil
	}
	if err != nil {
		return LeasedRun{}, fmt.Errorf("acquiring %s: %w", what, err)
	}
	run.Held = true
	defer func() {
		releaseCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), LeaseReleaseBudget)
		defer cancel()
		if rerr := l.ReleaseLease(releaseCtx, lease); rerr != nil {
			run.NotReleased = fmt.Errorf("releasing %s (it ends by itself at %s): %w", what,
				lease.ExpiresAt.UTC().Format(time.RFC3339), rerr)
		}
	}()
	defer crash.Capture(&err)
	return run, body()
}

// ReleaseWarning is NotReleased as a report's text: empty when the lease was given back.
func (r LeasedRun) ReleaseWarning() string {
	if r.NotReleased == nil {
		return ""
	}
	return r.NotReleased.Error()
}
