package termination

import (
	"context"
	"fmt"
	"time"

	"github.com/nodewright/nodewright/shared/adapters/state"
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
// of a draining Node are re-solved as pending by the provisioner, which launches what they need and
// records on each such claim that it replaces this one (state.Claim.Replaces), as consolidation does for
// its replacements. The pods are evicted once a provisioning run that began after the drain started has
// finished (so their capacity was decided) and every claim launched to replace this one has initialized
// (so it is there to take them); claims launched for other pods do not hold the drain. The wait is
// bounded by the earlier of ReplacementWait after the drain started and DeadlineReserve before the
// deadline: a long terminationGracePeriod or a scheduled change days away does not stretch it.
func (s *Service) gate(ctx context.Context, claim state.Claim, deadline *time.Time, now time.Time) (wait bool, why string, err error) {
	if claim.DrainingAt == nil {
		return false, "", nil
	}
	limit := claim.DrainingAt.Add(s.cfg.ReplacementWait)
	if deadline != nil {
		if reserve := deadline.Add(-s.cfg.DeadlineReserve); reserve.Before(limit) {
			limit = reserve
		}
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
	// Only claims not initialized yet can hold the drain. They are found by key (the markers their
	// creation left) and read strongly consistent, one by one: no read of every claim.
	replacements, err := s.deps.Store.ClaimReplacements(ctx, claim.Name)
	if err != nil {
		return false, "", err
	}
	for _, c := range replacements {
		if c.InitializedAt == nil && holdsDrain[c.Lifecycle] {
			return true, fmt.Sprintf("waiting for replacement %s (%s) to initialize", c.Name, c.Lifecycle), nil
		}
	}
	return false, "", nil
}

// holdsDrain are the lifecycle states in which a replacement holds the drain it replaces: on its way to
// initialized. One draining, terminating or deleted never will.
var holdsDrain = map[state.Lifecycle]bool{state.Pending: true, state.Launched: true, state.Registered: true}
