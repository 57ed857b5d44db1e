package disruptionrun

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/nodeclass"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/flows/termination"
)

// Decision kinds and the termination reason of reservations that end.
const (
	// KindCapacityBlockExpiring is recorded when a claim is handed to the termination flow because its
	// capacity block ends; ReasonCapacityBlockExpiring is that request's reason (and the claim's
	// disruption reason once it drains).
	KindCapacityBlockExpiring   = "CapacityBlockExpiring"
	ReasonCapacityBlockExpiring = "CapacityBlockExpiring"
	// KindCapacityReservationEnded is recorded when a reserved claim is demoted to on-demand.
	KindCapacityReservationEnded = "CapacityReservationEnded"
)

// MaxReservationChangesPerRun bounds the claims one run hands over or demotes for the end of their
// reservations (each a claim write and a queue message or Node patch, and an Event) and the Nodes it
// relabels; the rest follow a minute later, in the next run. 200 hand-overs take a few seconds, and a
// block larger than that still has every node handed over well inside its ten minutes.
const MaxReservationChangesPerRun = 200

// ReservationLookup reads capacity reservations by id; *nodeclass.ReservationLookup satisfies it.
type ReservationLookup interface {
	Lookup(ctx context.Context, ids []string) (map[string]nodeclass.ReservationState, error)
}

var _ ReservationLookup = (*nodeclass.ReservationLookup)(nil)

// errNotReserved abandons a demotion or hand-over whose claim changed since the run read it.
var errNotReserved = errors.New("claim changed since the run read it")

// endReservations acts on the end of the capacity reservations the claims run in (planReservationEnds):
// capacity-block nodes are handed to the termination flow, reserved claims whose reservation ended are
// demoted to on-demand, and the Nodes of demoted claims are relabelled. It reads nothing whole: the
// reservations come from this run's EC2NodeClass resolutions (no call), and only those of claims that no
// resolution selects any more are looked up by id (Deps.Reservations: one DescribeCapacityReservations,
// at most nodeclass.MaxReservationLookups ids; none without a lookup wired, and then such claims wait),
// and a reservation a lookup found ended is not asked about again by this process (rememberEnded).
// The claims and Nodes are the run's read. It reports whether it changed a claim or a Node, so the run
// reads again before it decides.
//
// A block's end is not a voluntary disruption: as in Karpenter, no budget holds it and no command is
// made, since the capacity goes whatever is decided. Replacement first is the termination flow's gate,
// as for an interruption: the claim drains once a provisioning run has placed its pods and their new
// nodes have initialized, for at most its replacement wait and never past the deadline's reserve, and
// by EC2's reclaim time every pod is off. From the hand-over the claim has a GoneBy, so no command takes
// it or moves pods onto it, and it counts as disrupting against its NodePool's budgets.
func (r *Runner) endReservations(ctx context.Context, w *world, rep *Report) bool {
	now := r.deps.Now().UTC()
	facts := factsFromResolutions(w.launches.Reservations())
	r.mu.Lock()
	for id, f := range r.ended {
		if _, ok := facts[id]; !ok {
			facts[id] = f
		}
	}
	r.mu.Unlock()
	plan := planReservationEnds(w.claims, facts, now)
	if len(plan.unknown) > 0 && r.deps.Reservations != nil {
		states, err := r.deps.Reservations.Lookup(ctx, plan.unknown)
		if err != nil {
			rep.Errors = append(rep.Errors, fmt.Sprintf("looking up capacity reservations: %v", err))
		} else {
			for id, s := range states {
				facts[id] = factOf(s)
			}
			r.rememberEnded(states)
			plan = planReservationEnds(w.claims, facts, now)
		}
	}
	left := MaxReservationChangesPerRun
	var ds []state.Decision
	changed := false
	for _, d := range plan.drains {
		if left == 0 || ctx.Err() != nil {
			break
		}
		left--
		if dec, ok := r.drainBlockNode(ctx, d, now, rep); ok {
			ds, changed = append(ds, dec...), true
		}
	}
	demoted := map[string]state.Claim{}
	for _, d := range plan.demotions {
		if left == 0 || ctx.Err() != nil {
			break
		}
		left--
		c, dec, ok := r.demote(ctx, w, d, now, rep)
		if ok {
			demoted[c.Name], ds, changed = c, append(ds, dec...), true
		}
	}
	if r.relabelNodes(ctx, w, demoted, &left, rep) {
		changed = true
	}
	r.record(ctx, ds, rep)
	return changed
}

// maxEndedRemembered bounds Runner.ended; past it the memory starts afresh.
const maxEndedRemembered = 10_000

// rememberEnded keeps what a lookup found ended (not active, or gone: a reservation never becomes active
// again), so a warm function does not ask EC2 about it on every run while a claim still names it (an
// on-demand node that matched an open ODCR keeps its reservation-id label, as launched).
func (r *Runner) rememberEnded(states map[string]nodeclass.ReservationState) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, s := range states {
		if s.Active() {
			continue
		}
		if r.ended == nil || len(r.ended) >= maxEndedRemembered {
			r.ended = map[string]reservationFact{}
		}
		r.ended[id] = factOf(s)
	}
}

// drainBlockNode hands claim d to the termination flow with the block's reclaim time as its deadline.
// The claim is marked first (GoneBy, and the hand-over's time and count), conditionally on the hand-over
// the run read, so overlapping runs send once; a failed send takes the mark back so the next run sends.
func (r *Runner) drainBlockNode(ctx context.Context, d blockDrain, now time.Time, rep *Report) ([]state.Decision, bool) {
	c := d.claim
	goneBy := d.goneBy.UTC()
	marked, err := r.deps.Store.UpdateClaim(ctx, c.Name, func(cur *state.Claim) error {
		if !cur.Lifecycle.InService() || !sameTime(cur.TerminationSentAt, c.TerminationSentAt) {
			return errNotReserved
		}
		if cur.GoneBy == nil || goneBy.Before(*cur.GoneBy) {
			cur.GoneBy = &goneBy
		}
		cur.TerminationSentAt, cur.TerminationSends = &now, cur.TerminationSends+1
		return nil
	})
	if errors.Is(err, errNotReserved) {
		return nil, false
	}
	if err != nil {
		rep.Errors = append(rep.Errors, fmt.Sprintf("marking claim %s for its capacity block's end: %v", c.Name, err))
		return nil, false
	}
	deadline := *marked.GoneBy
	req := termination.Request{Claim: c.Name, Reason: ReasonCapacityBlockExpiring, Deadline: &deadline, RequestedAt: now}
	if err := r.deps.Terminations.Send(ctx, req); err != nil {
		rep.Errors = append(rep.Errors, fmt.Sprintf("claim %s: %v", c.Name, err))
		_, uerr := r.deps.Store.UpdateClaim(ctx, c.Name, func(cur *state.Claim) error {
			if !sameTime(cur.TerminationSentAt, &now) {
				return errNotReserved
			}
			cur.TerminationSentAt, cur.TerminationSends = c.TerminationSentAt, c.TerminationSends
			return nil
		})
		if uerr != nil && !errors.Is(uerr, errNotReserved) {
			rep.Errors = append(rep.Errors, fmt.Sprintf("taking back the hand-over mark of claim %s: %v", c.Name, uerr))
		}
		return nil, false
	}
	rep.BlockDrains++
	if rep.HandedOver == nil {
		rep.HandedOver = map[string]int{}
	}
	rep.HandedOver[c.NodePool+"/"+ReasonCapacityBlockExpiring]++
	msg := fmt.Sprintf("capacity block %s ends", d.reservation)
	if !d.end.IsZero() {
		msg += " at " + d.end.UTC().Format(time.RFC3339)
	} else {
		msg += " (EC2 no longer knows it)"
	}
	msg += fmt.Sprintf("; draining before EC2 reclaims the instance at %s (replacement capacity first, as for an interruption)",
		deadline.Format(time.RFC3339))
	details := map[string]string{"nodePool": c.NodePool, "claim": c.Name, "capacityReservationId": d.reservation,
		"goneBy": deadline.Format(time.RFC3339), "attempt": strconv.Itoa(marked.TerminationSends)}
	if c.NodeName != "" {
		r.publish(ctx, kube.Event{Object: nodeRef(c.NodeName), Type: corev1.EventTypeWarning, Reason: kube.ReasonCapacityBlockExpiring,
			Message: msg}, rep)
	}
	return reservationDecisions(c, "block-"+strconv.FormatInt(now.UnixMilli(), 10), KindCapacityBlockExpiring, msg, now, details), true
}

// demote makes reserved claim d an on-demand one: capacity type on-demand (label too), the
// reservation-id and reservation-type labels gone as Karpenter removes them, and the on-demand price of
// its instance type (the reserved one is a token price; unchanged when the type is not priced), so
// pricing and consolidation see what it costs now. Conditional on the claim still being in service and
// in that reservation.
func (r *Runner) demote(ctx context.Context, w *world, d demotion, now time.Time, rep *Report) (state.Claim, []state.Decision, bool) {
	price, priced := w.launches.OnDemandPrice(d.claim.InstanceType)
	c, err := r.deps.Store.UpdateClaim(ctx, d.claim.Name, func(cur *state.Claim) error {
		if !cur.Lifecycle.InService() || cur.Labels[scheduling.LabelCapacityReservationID] != d.reservation ||
			cur.CapacityType != scheduling.CapacityTypeReserved {
			return errNotReserved
		}
		demoteClaim(cur, price, priced)
		return nil
	})
	if errors.Is(err, errNotReserved) {
		return state.Claim{}, nil, false
	}
	if err != nil {
		rep.Errors = append(rep.Errors, fmt.Sprintf("demoting claim %s to on-demand: %v", d.claim.Name, err))
		return state.Claim{}, nil, false
	}
	rep.Demoted++
	msg := fmt.Sprintf("capacity reservation %s is %s; the node runs as on-demand capacity (%s=%s)", d.reservation, d.why,
		scheduling.LabelCapacityType, scheduling.CapacityTypeOnDemand)
	if c.NodeName != "" {
		r.publish(ctx, kube.Event{Object: nodeRef(c.NodeName), Type: corev1.EventTypeNormal, Reason: kube.ReasonCapacityReservationEnded,
			Message: msg}, rep)
	}
	details := map[string]string{"nodePool": c.NodePool, "claim": c.Name, "capacityReservationId": d.reservation, "reservation": d.why}
	return c, reservationDecisions(c, "demoted-"+strconv.FormatInt(now.UnixMilli(), 10), KindCapacityReservationEnded, msg, now, details), true
}

// demoteClaim turns claim c's record into an on-demand one (see demote).
func demoteClaim(c *state.Claim, price float64, priced bool) {
	c.CapacityType, c.ReservationID = scheduling.CapacityTypeOnDemand, ""
	if priced {
		c.PricePerHour = price
	}
	labels := make(map[string]string, len(c.Labels))
	for k, v := range c.Labels {
		if !reservationLabel(k) {
			labels[k] = v
		}
	}
	labels[scheduling.LabelCapacityType] = scheduling.CapacityTypeOnDemand
	c.Labels = labels
}

// reservationLabel reports whether k is one of the labels that name a reservation (Karpenter's
// ReservedCapacityLabels).
func reservationLabel(k string) bool {
	return k == scheduling.LabelCapacityReservationID || k == scheduling.LabelCapacityReservationType
}

// relabelNodes brings the labels of registered Nodes whose claim is on-demand but that still say
// reserved (just demoted, or registered since with the labels it launched with) to on-demand, without
// the reservation labels. Only Nodes with a claim record (this run's claimOf, or a claim demoted here)
// are touched. It reports whether it patched one.
func (r *Runner) relabelNodes(ctx context.Context, w *world, demoted map[string]state.Claim, left *int, rep *Report) bool {
	changed := false
	for i := range w.snap.Nodes {
		n := &w.snap.Nodes[i]
		c, ok := w.claimOf[n.Name]
		if !ok {
			continue // not ours
		}
		if d, ok := demoted[c.Name]; ok {
			c = d
		}
		if c.CapacityType != scheduling.CapacityTypeOnDemand || !c.Lifecycle.InService() || n.DeletionTimestamp != nil ||
			n.Labels[scheduling.LabelCapacityType] != scheduling.CapacityTypeReserved || n.Labels[scheduling.LabelNodeRegistered] != "true" {
			continue
		}
		if *left == 0 || ctx.Err() != nil {
			return changed
		}
		*left--
		onDemand := scheduling.CapacityTypeOnDemand
		labels := map[string]*string{scheduling.LabelCapacityType: &onDemand,
			scheduling.LabelCapacityReservationID: nil, scheduling.LabelCapacityReservationType: nil}
		if err := r.deps.Nodes.Label(ctx, n.Name, labels); err != nil {
			if !kube.IsNotFound(err) {
				rep.Errors = append(rep.Errors, err.Error())
			}
			continue
		}
		rep.Relabelled++
		changed = true
	}
	return changed
}

// reservationDecisions are the decision records of one claim's reservation change, under its NodeClaim
// and, when it has one, its Node.
func reservationDecisions(c state.Claim, id, kind, msg string, now time.Time, details map[string]string) []state.Decision {
	subjects := []string{"nodeclaim/" + c.Name}
	if c.NodeName != "" {
		subjects = append(subjects, "node/"+c.NodeName)
	}
	out := make([]state.Decision, 0, len(subjects))
	for _, s := range subjects {
		out = append(out, state.Decision{Subject: s, ID: id, Kind: kind, Reason: kind, Message: msg, At: now, Details: details})
	}
	return out
}

// sameTime reports whether two optional times are both unset or equal.
func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Equal(*b)
}
