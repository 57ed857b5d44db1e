package disruptionrun

import (
	"slices"
	"strings"
	"time"

	"github.com/nodewright/nodewright/shared/adapters/nodeclass"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// BlockResendAfter is how long the hand-over of a capacity block's node waits for the termination flow
// to take the claim (move it to draining) before the run sends it again: a request lost on the way is
// sent again well inside the ten minutes a block's drain has before EC2 reclaims its instances.
const BlockResendAfter = 3 * time.Minute

// reservationFact is what a run knows of one capacity reservation: from its EC2NodeClass resolutions,
// else from a lookup by id. A reservation absent from the facts is unknown, and nothing is decided for
// its claims.
type reservationFact struct {
	// found is false when EC2 knows no such reservation.
	found bool
	// active: instances still run in it as reserved capacity (a block past its drain lead still is).
	active bool
	// state is EC2's word for it (active, expired, cancelled...; "" when not found); rtype is default or
	// capacity-block ("" when not found).
	state, rtype string
	end          *time.Time
}

// factsFromResolutions are the facts of the reservations this run's classes resolved: all usable.
func factsFromResolutions(rs map[string]apis.CapacityReservationStatus) map[string]reservationFact {
	out := make(map[string]reservationFact, len(rs))
	for id, cr := range rs {
		f := reservationFact{found: true, active: true, state: nodeclass.ReservationStateActive, rtype: cr.ReservationType}
		if cr.EndTime != nil {
			end := cr.EndTime.Time
			f.end = &end
		}
		out[id] = f
	}
	return out
}

// factOf is what a lookup by id said of a reservation.
func factOf(s nodeclass.ReservationState) reservationFact {
	return reservationFact{found: s.Found, active: s.Active(), state: s.State, rtype: s.ReservationType, end: s.EndTime}
}

// blockDrain is a claim to hand to the termination flow because its capacity block ends.
type blockDrain struct {
	claim       state.Claim
	reservation string
	// goneBy is when EC2 starts terminating the block's instances: the drain's deadline.
	goneBy time.Time
	// end is the block's end (zero when EC2 no longer knows the block).
	end time.Time
}

// demotion is a reserved claim whose reservation is no longer active: it runs as on-demand capacity.
type demotion struct {
	claim       state.Claim
	reservation string
	// why is the reservation's state ("expired", "cancelled"...) or "not found".
	why string
}

// reservationPlan is what planReservationEnds decided.
type reservationPlan struct {
	drains    []blockDrain
	demotions []demotion
	// unknown are the reservations of claims that the facts say nothing about, sorted.
	unknown []string
}

// planReservationEnds decides, for the claims in service that run in a capacity reservation (their
// karpenter.k8s.aws/capacity-reservation-id label), what the end of that reservation asks for at now:
//
//   - a capacity block is drained from nodeclass.CapacityBlockDrainLead before its end (at once when the
//     end has passed, or the block is over or gone), with EC2's reclaim time as the drain's deadline, as
//     Karpenter's capacityreservation.expiration controller deletes such NodeClaims. A claim already
//     handed over for a deadline at least as early, less than BlockResendAfter ago, is left to the
//     termination flow. Its capacity type does not matter: every instance in a block leaves with it.
//   - a claim of capacity type reserved whose reservation (not a block) is no longer active or no longer
//     exists is demoted to on-demand, as Karpenter's capacityreservation.capacitytype controller does:
//     EC2 keeps such an instance running as on-demand capacity.
//
// Claims still pending have no instance yet and are left out, as are claims on their way out (their
// drain is under way). It reads no clock and calls nothing.
func planReservationEnds(claims []state.Claim, facts map[string]reservationFact, now time.Time) reservationPlan {
	var p reservationPlan
	unknown := map[string]bool{}
	for _, c := range claims {
		rid := c.Labels[scheduling.LabelCapacityReservationID]
		if rid == "" || !c.Lifecycle.InService() || c.Lifecycle == state.Pending {
			continue
		}
		f, ok := facts[rid]
		if !ok {
			unknown[rid] = true
			continue
		}
		rtype := f.rtype
		if rtype == "" {
			rtype = c.Labels[scheduling.LabelCapacityReservationType] // EC2 no longer knows it: as launched
		}
		if rtype == nodeclass.ReservationTypeCapacityBlock {
			if d, ok := blockDrainOf(c, rid, f, now); ok && !handedOver(c, d.goneBy, now) {
				p.drains = append(p.drains, d)
			}
			continue
		}
		if !f.active && c.CapacityType == scheduling.CapacityTypeReserved {
			why := "not found"
			if f.found {
				why = firstOf(f.state, "not active")
			}
			p.demotions = append(p.demotions, demotion{claim: c, reservation: rid, why: why})
		}
	}
	for id := range unknown {
		p.unknown = append(p.unknown, id)
	}
	slices.Sort(p.unknown)
	slices.SortFunc(p.drains, func(a, b blockDrain) int { return strings.Compare(a.claim.Name, b.claim.Name) })
	slices.SortFunc(p.demotions, func(a, b demotion) int { return strings.Compare(a.claim.Name, b.claim.Name) })
	return p
}

// blockDrainOf says whether claim c on block rid (what f says of it) is due to drain at now, and by when.
func blockDrainOf(c state.Claim, rid string, f reservationFact, now time.Time) (blockDrain, bool) {
	d := blockDrain{claim: c, reservation: rid, goneBy: now}
	if f.end != nil {
		d.end = *f.end
		d.goneBy = nodeclass.BlockReclaimedAt(*f.end)
	}
	if f.active && !nodeclass.BlockEnding(nodeclass.ReservationTypeCapacityBlock, f.end, now) {
		return blockDrain{}, false
	}
	return d, true
}

// handedOver reports whether claim c was handed to the termination flow for a deadline no later than
// goneBy less than BlockResendAfter ago.
func handedOver(c state.Claim, goneBy, now time.Time) bool {
	return c.GoneBy != nil && !c.GoneBy.After(goneBy) && c.TerminationSentAt != nil && now.Sub(*c.TerminationSentAt) < BlockResendAfter
}
