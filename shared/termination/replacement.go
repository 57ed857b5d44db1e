package termination

import (
	"context"
	"fmt"
	"time"

	"github.com/nodewright/nodewright/shared/state"
)

// ReplacementMark is the state-table mark the provisioner advances when a run over a complete snapshot
// finishes.
const ReplacementMark = state.ProvisionerSnapshotMark

// Defaults of the replacement gate.
const (
	// DefaultReplacementWait bounds the wait for replacement capacity when nothing forces the drain.
	DefaultReplacementWait = 5 * time.Minute
	// DefaultDeadlineReserve is the part of a deadline kept for the drain itself: the gate opens this long
	// before the deadline whatever the replacement does.
	DefaultDeadlineReserve = 45 * time.Second
	// replacementPoll is how soon a gated request looks again.
	replacementPoll = 2 * time.Second
)

// gate says whether the drain should wait for replacement capacity, and why. Replacement first: the pods
// of a draining Node are re-solved as pending by the provisioner, which launches what they need; they are
// evicted once a provisioning run that began after the drain started has finished (so their capacity was
// decided) and every claim created since then has initialized (so it is there to take them). The wait is
// bounded: DeadlineReserve before the deadline, or ReplacementWait after the drain started.
func (s *Service) gate(ctx context.Context, claim state.Claim, deadline *time.Time, now time.Time) (wait bool, why string, err error) {
	if claim.DrainingAt == nil {
		return false, "", nil
	}
	limit := claim.DrainingAt.Add(s.cfg.ReplacementWait)
	if deadline != nil {
		limit = deadline.Add(-s.cfg.DeadlineReserve)
	}
	if !now.Before(limit) {
		return false, "", nil
	}
	mark, err := s.deps.Store.Mark(ctx, ReplacementMark)
	if err != nil {
		return false, "", err
	}
	if mark.Before(*claim.DrainingAt) {
		return true, "waiting for a provisioning run to place its pods", nil
	}
	claims, err := s.deps.Store.ListClaims(ctx)
	if err != nil {
		return false, "", err
	}
	for _, c := range claims {
		if c.Name != claim.Name && c.Lifecycle.Live() && c.Lifecycle != state.Draining && c.InitializedAt == nil &&
			!c.CreatedAt.Before(*claim.DrainingAt) {
			return true, fmt.Sprintf("waiting for replacement %s (%s) to initialize", c.Name, c.Lifecycle), nil
		}
	}
	return false, "", nil
}
