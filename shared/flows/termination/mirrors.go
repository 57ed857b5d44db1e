package termination

import (
	"context"

	"github.com/nodewright/nodewright/shared/adapters/mirror"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// ClaimMirrors writes the NodeClaim mirrors of the claims a request changed (draining, terminating, the
// Drained condition), right after the request's steps; *mirror.Follower satisfies it (bounded in count
// and time, on change only, never failing the request).
type ClaimMirrors interface {
	Follow(ctx context.Context, claims []state.Claim) mirror.FollowReport
}

var _ ClaimMirrors = (*mirror.Follower)(nil)

// noting is the Store with every claim write noted in the context's mirror.Changed.
type noting struct{ Store }

func (n noting) UpdateClaim(ctx context.Context, name string, mutate func(*state.Claim) error) (state.Claim, error) {
	c, err := n.Store.UpdateClaim(ctx, name, mutate)
	if err == nil {
		mirror.NoteChanged(ctx, c)
	}
	return c, err
}

// followMirrors writes the mirrors of the claims one request's steps changed. It runs after the steps (and
// their re-drive), so the request's own work never waits on the API server's mirrors; what it leaves
// goes to the lifecycle's next sweep, and its failures are logged, never the request's.
func (s *Service) followMirrors(ctx context.Context, changed *mirror.Changed) (written, left int) {
	if s.deps.Mirrors == nil {
		return 0, 0
	}
	claims := changed.Claims()
	if len(claims) == 0 {
		return 0, 0
	}
	rep := s.deps.Mirrors.Follow(ctx, claims)
	for _, e := range rep.Errors {
		s.log.WarnContext(ctx, "writing a NodeClaim mirror failed; the lifecycle's next sweep writes it", "error", e)
	}
	return rep.Written, rep.Left
}
