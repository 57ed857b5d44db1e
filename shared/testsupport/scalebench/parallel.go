package scalebench

import (
	"context"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
)

// parallel calls f(i) for i in [0, n) on workers goroutines and returns the first error.
func parallel(ctx context.Context, n, workers int, f func(ctx context.Context, i int) error) error {
	g, ctx := errgroup.WithContext(ctx)
	var next atomic.Int64
	for w := 0; w < min(workers, n); w++ {
		g.Go(func() error {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return ctx.Err()
				}
				if err := f(ctx, i); err != nil {
					return err
				}
			}
		})
	}
	return g.Wait()
}
