package interruption

import (
	"context"

	"github.com/nodewright/nodewright/shared/adapters/mirror"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// ClaimMirrors writes the NodeClaim mirrors of the claims a message changed (a claim moved to draining
// or terminating with the notice's reason and deadline, a launch marked failed), right after the
// message's steps; *mirror.Follower satisfies it (bounded in count and time, on change only, never
// failing the message).
type ClaimMirrors interface {
	Follow(ctx context.Context, claims []state.Claim) mirror.FollowReport
}

var _ ClaimMirrors = (*mirror.Follower)(nil)

// noting is the state store with every claim write noted in the context's mirror.Changed.
type noting struct{ StateStore }

func (n noting) UpdateClaim(ctx context.Context, name string, mutate func(*state.Claim) error) (state.Claim, error) {
	c, err := n.StateStore.UpdateClaim(ctx, name, mutate)
	if err == nil {
		mirror.NoteChanged(ctx, c)
	}
	return c, err
}

// followMirrors writes the mirrors of the claims one message's steps changed, after the steps (the
// replacement request and the hand-over to termination go first); failures are logged, and what the
// follower leaves goes to the lifecycle's next sweep.
func (s *Service) followMirrors(ctx context.Context, changed *mirror.Changed, stats *BatchStats) {
	if s.deps.Mirrors == nil {
		return
	}
	claims := changed.Claims()
	if len(claims) == 0 {
		return
	}
	rep := s.deps.Mirrors.Follow(ctx, claims)
	stats.MirrorsWritten += rep.Written
	stats.MirrorsLeft += rep.Left
	for _, e := range rep.Errors {
		s.deps.Log.WarnContext(ctx, "writing a NodeClaim mirror failed; the lifecycle's next sweep writes it", "error", e)
	}
}
