package state

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"
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

// PanicError is a run's panic turned into an error, with the stack it happened on.
type PanicError struct {
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v\n%s", e.Value, e.Stack) }

// RunLeased runs body holding lease name as holder for ttl (see LeaseTTLFor) and gives the lease back on
// every way out of body: a return, an error, or a panic, which it recovers and returns as a *PanicError,
// so a crash on the run's goroutine never leaves the next trigger coalescing into a lease nobody holds.
// held is false, with no error, when someone else holds the lease; body then does not run. what names the
// lease in errors ("the provisioner lease").
func RunLeased(ctx context.Context, l Leaser, name, holder, what string, ttl time.Duration, body func() error) (held bool, err error) {
	lease, err := l.AcquireLease(ctx, name, holder, ttl)
	if errors.Is(err, ErrLeaseHeld) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("acquiring %s: %w", what, err)
	}
	defer func() {
		if r := recover(); r != nil {
			err = errors.Join(err, &PanicError{Value: r, Stack: debug.Stack()})
		}
		releaseCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), LeaseReleaseBudget)
		defer cancel()
		if rerr := l.ReleaseLease(releaseCtx, lease); rerr != nil {
			err = errors.Join(err, fmt.Errorf("releasing %s: %w", what, rerr))
		}
	}()
	return true, body()
}
