package lifecycle

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultWorkers is how many claims a pass works on at once while registering and initializing Nodes.
// An item is a short chain of round trips (the claim's GetItem and PutItem, a Node GET and PATCH per
// change, an Event, a decision record); against a remote API server and DynamoDB each is mostly network
// wait, so a burst of 200 joining Nodes done one at a time spends its pass waiting, and eight in flight
// overlap those waits about eightfold. Eight stays small beside the API client's burst
// (kube.DefaultBurst) and the API server's in-flight limits, so a pass does not crowd out the other
// functions sharing them; where the servers are CPU-bound instead (the local sandbox on two cores) more
// workers gain nothing, and eight costs nothing either. Each worker does its own item strictly in order.
const DefaultWorkers = 8

// DefaultDeferMargin is how close to the context's deadline a pass still starts a claim's work: an item
// started later could be cut off half-way and end as an error. The margin covers the items in flight
// (a few round trips each, slower on a loaded machine) and the lease release. What is not started is
// left for the next pass, which finds it again, since every step is read from the claims and Nodes.
const DefaultDeferMargin = 5 * time.Second

// late says whether the pass is within its margin of the context's deadline (or past it, or cancelled),
// so it must not start more work. Deadlines come from the wall clock (context.WithTimeout), so they are
// measured with it, not with the injected clock that dates claims and decisions.
func (p *passState) late(ctx context.Context) bool {
	if ctx.Err() != nil {
		return true
	}
	deadline, ok := ctx.Deadline()
	return ok && time.Until(deadline) < p.r.cfg.DeferMargin
}

// paced runs do for each item, at most RunnerConfig.Workers at once, starting them in order (pace). If
// the pass grows late it defers the claims (claim names each item's) of the items it did not start,
// noting that what was left undone. It returns once every started item is done.
func paced[T any](ctx context.Context, p *passState, items []T, claim func(T) string, what string, do func(context.Context, T)) {
	started := pace(ctx, p, items, do)
	var deferred []string
	for _, rest := range items[started:] {
		deferred = append(deferred, claim(rest))
	}
	p.deferItems(deferred, what)
}

// pace runs do for each item, at most RunnerConfig.Workers at once, starting them in order. Once a
// worker is free for the next item it asks the pass whether it is late; if so it starts no more. It
// returns, once every started item is done, how many it started.
func pace[T any](ctx context.Context, p *passState, items []T, do func(context.Context, T)) int {
	free := make(chan struct{}, p.r.cfg.Workers)
	var wg sync.WaitGroup
	var crashed atomic.Value // the first worker's panic, carried to the pass's goroutine
	started := len(items)
	for i, it := range items {
		free <- struct{}{}
		if p.late(ctx) {
			started = i
			break
		}
		wg.Add(1)
		go func() {
			defer func() { <-free; wg.Done() }()
			defer func() {
				if r := recover(); r != nil {
					crashed.CompareAndSwap(nil, workerPanic{r})
				}
			}()
			do(ctx, it)
		}()
	}
	wg.Wait()
	if c, ok := crashed.Load().(workerPanic); ok {
		// On a worker's goroutine a panic would end the process with the lease held; on the pass's it is
		// recovered as the pass's error and the lease given back (state.RunLeased).
		panic(c.value)
	}
	return started
}

// deferItems notes claims the pass left for the next one because its deadline was near.
func (p *passState) deferItems(claims []string, what string) {
	for _, name := range claims {
		p.wait(name, "Deferred: the pass was near its deadline before "+what+"; the next pass takes it up")
	}
	p.locked(func() {
		for _, name := range claims {
			p.deferred[name] = true
		}
		p.rep.Deferred = len(p.deferred)
	})
}

// locked runs f holding the pass's lock: workers share the report and the pass's bookkeeping.
func (p *passState) locked(f func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f()
}

// workerPanic wraps a recovered panic value, so an atomic.Value holds one concrete type whatever was thrown.
type workerPanic struct{ value any }
