package scheduling

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// reservationLedger counts, during one solve, how many more instances each capacity reservation takes.
// A new claim whose target type launches into a reservation takes one instance of it when it opens;
// once a reservation has none left, every NodePool excludes it (capacity-reservation-id NotIn), so later
// claims see its types at their next offering's price, or not at all.
type reservationLedger struct {
	catalog map[string]int // ReservationCapacity in the catalog (the least, when pools disagree)
	pending map[string]int // taken by in-flight claims whose launch is not answered yet
	left    map[string]int
}

// newReservationLedger reads the reservations of the available reserved offerings of the catalogs, less
// the in-flight claims that hold one. It returns nil when no catalog has a reservation.
func newReservationLedger(catalogs [][]*InstanceType, inFlight []InFlightClaim) *reservationLedger {
	catalog := map[string]int{}
	for _, types := range catalogs {
		for _, it := range types {
			for i := range it.Offerings {
				o := &it.Offerings[i]
				if o.CapacityType != CapacityTypeReserved || !o.Available || o.ReservationID == "" {
					continue
				}
				n := max(o.ReservationCapacity, 0)
				if cur, ok := catalog[o.ReservationID]; !ok || n < cur {
					catalog[o.ReservationID] = n
				}
			}
		}
	}
	if len(catalog) == 0 {
		return nil
	}
	l := &reservationLedger{catalog: catalog, pending: map[string]int{}, left: map[string]int{}}
	for _, c := range inFlight {
		if _, ok := catalog[c.PendingReservationID]; ok {
			l.pending[c.PendingReservationID]++
		}
	}
	for id, n := range catalog {
		l.left[id] = max(n-l.pending[id], 0)
	}
	return l
}

// takenByInFlight returns, sorted, the reservations that in-flight claims used up although the catalog
// still shows room in them.
func (l *reservationLedger) takenByInFlight() []string {
	var out []string
	for id, n := range l.left {
		if n == 0 && l.catalog[id] > 0 {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// take counts one more instance in reservation id and reports whether that used it up.
func (l *reservationLedger) take(id string) bool {
	l.left[id]--
	return l.left[id] == 0
}

// release gives back an instance taken by a claim that is dropped.
func (l *reservationLedger) release(id string) { l.left[id]++ }

// ids returns every reservation of the ledger, sorted.
func (l *reservationLedger) ids() []string {
	out := make([]string, 0, len(l.left))
	for id := range l.left {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// describe explains why reservation id has no instance left.
func (l *reservationLedger) describe(id string) string {
	if l.catalog[id] == 0 {
		return fmt.Sprintf("capacity reservation %s is full", id)
	}
	start := max(l.catalog[id]-l.pending[id], 0)
	var b strings.Builder
	fmt.Fprintf(&b, "capacity reservation %s is used up:", id)
	if start > 0 {
		fmt.Fprintf(&b, " new claims of this solve take the %d instance(s) it had left", start)
		if l.pending[id] > 0 {
			b.WriteString(",")
		}
	}
	if l.pending[id] > 0 {
		fmt.Fprintf(&b, " in-flight claims not launched yet hold %d", min(l.pending[id], l.catalog[id]))
	}
	return b.String()
}

// holdReservation lets a claim just opened take one instance of the reservation its target type would
// launch into, if any; using a reservation up takes it away from every NodePool. Unless the pool has
// minValues, the claim then holds only the reserved type's capacity against the pool's limits, since it
// launches nothing else (settleReservation).
func (s *solver) holdReservation(cl *claim) {
	if !containsCandidate(cl.candidates, cl.target) {
		return // the target is outside the pool's limits: it never launches
	}
	o, ok := cl.target.it.LaunchOffering(cl.reqs, cl.pool.unavailable)
	if !ok || o.CapacityType != CapacityTypeReserved || s.res.left[o.ReservationID] < 1 {
		return
	}
	cl.reservation, cl.held = o.ReservationID, cl.target
	if !cl.pool.minValues {
		cl.pool.limits.add(cl.reserved)
		cl.reserved = cl.target.it.Capacity
		cl.pool.limits.subtract(cl.reserved)
	}
	if s.res.take(o.ReservationID) {
		s.useUp([]string{o.ReservationID})
	}
}

// releaseReservation gives back the instance a dropped claim held.
func (s *solver) releaseReservation(cl *claim) {
	if cl.reservation != "" {
		s.res.release(cl.reservation)
		cl.reservation, cl.held = "", nil
	}
}

// useUp removes used-up reservations from the NodePools that offer them, and forgets the target types
// chosen while they were nearly free.
func (s *solver) useUp(ids []string) {
	details := make([]string, len(ids))
	for i, id := range ids {
		details[i] = s.res.describe(id)
	}
	for _, ps := range s.pools {
		ps.excludeReservations(ids, details)
	}
	clear(s.targets)
}

// settleReservation decides, when a claim is finalised, which reservation its launch takes: the one it
// holds if one of its options still launches into it, else the first by launch preference among its
// options' reservations with room. A claim with a reservation keeps only the options that launch into
// it (as Karpenter pins such a claim to its reservation), so that a launch finding it full falls back
// to the same type and the pool's limits hold no larger one; in a pool with minValues it keeps all its
// options, which minValues counts. The requirements returned exclude every
// other reservation of the options, so that a launch never tries capacity counted for other claims.
func (s *solver) settleReservation(cl *claim, options []*candidate) (Requirements, []*candidate) {
	unavailable := cl.pool.unavailable
	into := func(c *candidate) bool { return offersReservation(c.it, cl.reservation, cl.reqs, unavailable) }
	if cl.reservation != "" && !slices.ContainsFunc(options, into) {
		s.releaseReservation(cl)
	}
	if cl.reservation == "" {
		var best *Offering
		for _, c := range options {
			for i := range c.it.Offerings {
				o := &c.it.Offerings[i]
				if o.CapacityType != CapacityTypeReserved || s.res.left[o.ReservationID] < 1 || !c.it.compatibleOffering(o, cl.reqs, unavailable) {
					continue
				}
				if best == nil || cmp.Or(cmp.Compare(o.Price, best.Price), cmp.Compare(o.Zone, best.Zone)) < 0 {
					best = o
				}
			}
		}
		if best != nil {
			cl.reservation = best.ReservationID
			s.res.take(best.ReservationID)
		}
	}
	if cl.reservation != "" && !cl.pool.minValues {
		options = slices.DeleteFunc(options, func(c *candidate) bool { return !into(c) })
	}
	var others []string
	for _, c := range options {
		for i := range c.it.Offerings {
			o := &c.it.Offerings[i]
			if o.CapacityType == CapacityTypeReserved && o.ReservationID != cl.reservation && c.it.compatibleOffering(o, cl.reqs, unavailable) {
				others = append(others, o.ReservationID)
			}
		}
	}
	if len(others) == 0 {
		return cl.reqs, options
	}
	reqs := cl.reqs.Copy()
	reqs.Add(MustRequirement(LabelCapacityReservationID, OpNotIn, others...))
	return reqs, options
}

// usedUpReservations returns, sorted, the reservations other than the claim's own that its options
// would launch into but for their having no instance left.
func (s *solver) usedUpReservations(cl *claim, options []*candidate) []string {
	probe := cl.reqs.Copy()
	delete(probe, LabelCapacityReservationID)
	var out []string
	for _, c := range options {
		for i := range c.it.Offerings {
			o := c.it.Offerings[i]
			if o.CapacityType != CapacityTypeReserved || o.ReservationID == cl.reservation || s.res.left[o.ReservationID] > 0 {
				continue
			}
			if _, known := s.res.left[o.ReservationID]; !known {
				continue
			}
			o.ReservationCapacity = 1 // the count is what used it up; ask whether all else allows it
			if c.it.compatibleOffering(&o, probe, cl.pool.unavailable) {
				out = append(out, o.ReservationID)
			}
		}
	}
	return sortedUnique(out)
}

// offersReservation reports whether it launches into reservation id under reqs.
func offersReservation(it *InstanceType, id string, reqs Requirements, unavailable UnavailableOfferings) bool {
	for i := range it.Offerings {
		if o := &it.Offerings[i]; o.ReservationID == id && it.compatibleOffering(o, reqs, unavailable) {
			return true
		}
	}
	return false
}

// excludeReservations takes used-up reservations out of the pool: its requirements gain
// capacity-reservation-id NotIn them, and its candidates are filtered and priced anew. Open claims
// keep their own candidates. details explain each id, for the pods the pool can then no longer take.
func (ps *poolState) excludeReservations(ids, details []string) {
	var mine []string
	for i, id := range ids {
		if slices.ContainsFunc(ps.candidates, func(c *candidate) bool { return offersReservation(c.it, id, ps.reqs, ps.unavailable) }) {
			mine = append(mine, id)
			ps.usedUp = append(ps.usedUp, details[i])
		}
	}
	if len(mine) == 0 {
		return
	}
	if ps.initial == nil {
		ps.initial, ps.initialReqs = ps.candidates, ps.reqs
	}
	reqs := ps.reqs.Copy()
	reqs.Add(MustRequirement(LabelCapacityReservationID, OpNotIn, mine...))
	ps.reqs = reqs
	kept := filterCandidates(ps.candidates, reqs, ps.unavailable)
	cands := make([]*candidate, len(kept))
	for i, c := range kept {
		cc := *c
		cc.price = c.it.cheapestPrice(reqs, ps.unavailable)
		cands[i] = &cc
	}
	slices.SortStableFunc(cands, func(a, b *candidate) int {
		return cmp.Or(cmp.Compare(a.price, b.price), cmp.Compare(a.it.Name, b.it.Name))
	})
	for i, c := range cands {
		c.priceRank = i
	}
	ps.candidates = cands
	clear(ps.narrowed)
	if len(cands) == 0 && ps.preparedErr == nil {
		ps.preparedErr = ps.reservationRejection()
	}
}

// reservationRejection says that the pool's used-up reservations keep it from taking a pod.
func (ps *poolState) reservationRejection() *Rejection {
	return &Rejection{NodePool: ps.Name, Constraint: ConstraintReservation, Detail: strings.Join(ps.usedUp, "; ")}
}

// blockedByReservations returns a reservation rejection when, but for the reservations used up in this
// solve, one of the pool's types would satisfy reqs (and hold the pod, when fits is set).
func (ps *poolState) blockedByReservations(reqs Requirements, fits func(*candidate) bool) *Rejection {
	if len(ps.usedUp) == 0 {
		return nil
	}
	probe := reqs.Copy()
	delete(probe, LabelCapacityReservationID)
	for _, c := range ps.initial {
		if c.it.Requirements.Intersects(probe) == nil && c.it.HasAvailableOffering(probe, ps.unavailable) && (fits == nil || fits(c)) {
			return ps.reservationRejection()
		}
	}
	return nil
}

// marketPrices prices candidates at their cheapest offering under reqs that is not reserved (at their
// own price when they have none), so that a reservation's few instances do not pass for an unlimited
// supply of nearly free nodes where the solver estimates how to cover the whole demand.
func marketPrices(cands []*candidate, reqs Requirements, unavailable UnavailableOfferings) map[*candidate]float64 {
	open := reqs.Copy()
	open.Add(MustRequirement(LabelCapacityType, OpNotIn, CapacityTypeReserved))
	out := make(map[*candidate]float64, len(cands))
	for _, c := range cands {
		p := c.it.cheapestPrice(open, unavailable)
		if math.IsInf(p, 1) {
			p = c.price
		}
		out[c] = p
	}
	return out
}

// marketCapacities is capacities at market prices.
func marketCapacities(cands []*candidate, market map[*candidate]float64) []Capacity {
	out := capacities(cands)
	for i, c := range cands {
		out[i].Price = market[c]
	}
	return out
}

// deferredByReservation reports, in provisioning (Input.StrictReservations), whether the pool would take
// a pod of class c at step st into a capacity reservation but for claims of this solve, or in-flight
// claims not launched yet, having used it up: the pod tolerates the pool, the pool's requirements
// (before the used-up reservations were excluded) and the pod's allow one of its types within its
// limits that holds the pod, and that type has a reserved offering of a used-up reservation that
// everything else allows. Karpenter's provisioner then gives the pod to no NodePool of lower weight and
// relaxes nothing: it waits for the next run, when launches have settled how much the reservation
// really takes (a launch that finds it full frees what this solve counted). A reservation EC2 already
// reports full is not used up here: the pool simply has no such offering, and the next NodePool may
// take the pod.
func (s *solver) deferredByReservation(ps *poolState, c *podClass, st *classStep) bool {
	if !s.in.StrictReservations || s.res == nil || ps.initial == nil || ps.tolerates(c, st) != nil ||
		ps.initialReqs.Compatible(st.Requirements) != nil {
		return false
	}
	reqs := ps.initialReqs.Intersection(st.Requirements)
	for _, cand := range ps.initial {
		if cand.it.Requirements.Intersects(reqs) != nil || !c.requests.Fits(cand.usable) ||
			HostPortConflict(cand.ports, c.hostPorts) != nil || ps.limits.exceededBy(cand.it.Capacity) != nil {
			continue
		}
		for i := range cand.it.Offerings {
			o := cand.it.Offerings[i]
			if left, known := s.res.left[o.ReservationID]; o.CapacityType != CapacityTypeReserved || !known || left > 0 {
				continue
			}
			o.ReservationCapacity = 1 // the count is what used it up; ask whether all else allows it
			if cand.it.compatibleOffering(&o, reqs, ps.unavailable) {
				return true
			}
		}
	}
	return false
}

// deferralRejections completes the rejections of a pod deferred by pool's used-up reservation: every
// NodePool after it says it was not tried, and why.
func (s *solver) deferralRejections(rejections []Rejection, pool *poolState) []Rejection {
	after := map[string]bool{}
	seen := false
	for _, ps := range s.pools {
		if seen {
			after[ps.Name] = true
		}
		seen = seen || ps == pool
	}
	out := slices.DeleteFunc(rejections, func(r Rejection) bool { return after[r.NodePool] })
	for _, ps := range s.pools {
		if after[ps.Name] {
			out = append(out, Rejection{NodePool: ps.Name, Constraint: ConstraintReservation, Detail: fmt.Sprintf(
				"not tried: nodepool %s (weight %d) would take the pod into a capacity reservation this run has used up; "+
					"it waits for the next run instead of going to a lower-weight nodepool, as in Karpenter", pool.Name, pool.Weight)})
		}
	}
	return out
}
