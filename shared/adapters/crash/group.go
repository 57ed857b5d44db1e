package crash

import (
	"context"

	"golang.org/x/sync/errgroup"
)

// Group is errgroup.Group whose goroutines cannot crash the process: a goroutine's panic is recovered
// as a *PanicError, which, like any goroutine's error, cancels the group's context and comes back from
// Wait.
type Group struct {
	g *errgroup.Group
}

// WithContext returns a Group and a context cancelled when a goroutine of the group fails or panics,
// or when Wait returns.
func WithContext(ctx context.Context) (*Group, context.Context) {
	g, gctx := errgroup.WithContext(ctx)
	return &Group{g: g}, gctx
}

// Go runs f on a new goroutine, its panic recovered as its error.
func (g *Group) Go(f func() error) {
	g.g.Go(func() (err error) {
		defer Capture(&err)
		return f()
	})
}

// SetLimit bounds the group's goroutines running at once to n (Go then waits for a slot); n < 0 is no bound.
func (g *Group) SetLimit(n int) { g.g.SetLimit(n) }

// Wait waits for every goroutine and returns the first error (or recovered panic), if any.
func (g *Group) Wait() error { return g.g.Wait() }
