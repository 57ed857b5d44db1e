package provisioning

import (
	"context"
	"errors"
	"sync"
	"time"
)

// gate holds each caller until want callers are in flight together, and then lets every caller through;
// one that waits a minute for the others fails. Calls made one after another never gather. most is the
// largest number in flight at once.
type gate struct {
	mu            sync.Mutex
	want          int
	waiting, most int
	gathered      bool
	all           chan struct{}
}

func newGate(want int) *gate { return &gate{want: want, all: make(chan struct{})} }

// pass waits at the gate; the returned function leaves it.
func (g *gate) pass(ctx context.Context) (leave func(), err error) {
	g.mu.Lock()
	g.waiting++
	g.most = max(g.most, g.waiting)
	if g.waiting == g.want && !g.gathered {
		g.gathered = true
		close(g.all)
	}
	g.mu.Unlock()
	leave = func() { g.mu.Lock(); g.waiting--; g.mu.Unlock() }
	select {
	case <-g.all:
		return leave, nil
	case <-ctx.Done():
		leave()
		return func() {}, ctx.Err()
	case <-time.After(time.Minute):
		leave()
		return func() {}, errors.New("waited a minute for the other calls, which never came")
	}
}

// maxInFlight is the most callers that were at the gate at once.
func (g *gate) maxInFlight() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.most
}
