package mirror

import (
	"context"
	"sync"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

// Changed collects the claim records a piece of work (a message, a batch) committed, so that their
// NodeClaim mirrors are followed once the work is done (Follower). A flow puts one in the work's
// context (CollectChanged) and its store notes each claim it writes (NoteChanged); without one in the
// context, NoteChanged does nothing.
type Changed struct {
	mu     sync.Mutex
	claims []state.Claim
}

type changedKey struct{}

// CollectChanged returns ctx carrying a new Changed, and the Changed.
func CollectChanged(ctx context.Context) (context.Context, *Changed) {
	c := &Changed{}
	return context.WithValue(ctx, changedKey{}, c), c
}

// NoteChanged records c, as committed, in the Changed ctx carries.
func NoteChanged(ctx context.Context, c state.Claim) {
	if ch, ok := ctx.Value(changedKey{}).(*Changed); ok {
		ch.mu.Lock()
		ch.claims = append(ch.claims, c)
		ch.mu.Unlock()
	}
}

// Claims are the records noted so far, in the order they were committed.
func (c *Changed) Claims() []state.Claim {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]state.Claim(nil), c.claims...)
}
