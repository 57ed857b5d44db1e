package scheduling

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// finalize turns a filled claim into a ClaimPlan: the cheapest instance types its pods fit (at most
// MaxInstanceTypeOptions, keeping minValues), its requirements and the offering a launch would take.
// It returns false, and records the pods as unschedulable, when minValues cannot be met under Strict.
func (s *solver) finalize(cl *claim) (ClaimPlan, bool) {
	ps := cl.pool
	if len(cl.pods) == 0 {
		ps.limits.add(cl.reserved) // emptied by repairSpread
		if s.res != nil {
			s.releaseReservation(cl)
		}
		return ClaimPlan{}, false
	}
	options := cl.fitting()
	fitCount := len(options)
	launchReqs := cl.reqs
	if s.res != nil {
		launchReqs, options = s.settleReservation(cl, options)
	}
	// Order by the price the claim would pay: its zone, zone-id, capacity-type and reservation requirements
	// may rule out the pool's cheapest offerings.
	prices := make(map[*candidate]float64, len(options))
	for _, o := range options {
		prices[o] = o.price
		if s.res != nil || cl.reqs.Has(LabelZone) || cl.reqs.Has(LabelZoneID) || cl.reqs.Has(LabelCapacityType) {
			prices[o] = o.it.cheapestPrice(launchReqs, ps.unavailable)
		}
	}
	slices.SortStableFunc(options, func(a, b *candidate) int {
		return cmp.Or(cmp.Compare(prices[a], prices[b]), cmp.Compare(a.it.Name, b.it.Name))
	})
	relaxed := false
	if err := checkMinValues(options, cl.reqs); err != nil {
		if s.strict {
			s.failClaim(cl, ConstraintMinValues, err.Error())
			return ClaimPlan{}, false
		}
		relaxed = true
	}
	truncated := len(options) > MaxInstanceTypeOptions
	options = truncateForMinValues(options, cl.reqs, MaxInstanceTypeOptions)
	if !relaxed && checkMinValues(options, cl.reqs) != nil {
		if s.strict {
			s.failClaim(cl, ConstraintMinValues, "nodepool couldn't meet minValues after truncating to the cheapest instance types")
			return ClaimPlan{}, false
		}
		relaxed = true
	}
	// Replace the pessimistic limits reservation by the largest option actually handed to the launch.
	ps.limits.add(cl.reserved)
	var reserved Resources
	for _, o := range options {
		reserved = reserved.Max(o.it.Capacity)
	}
	ps.limits.subtract(reserved)

	names := make([]string, len(options))
	capacityTypes := map[string]bool{}
	priceOverlaid, capacityOverlaid := false, false
	for i, o := range options {
		names[i] = o.it.Name
		priceOverlaid = priceOverlaid || o.it.PriceOverlaid()
		capacityOverlaid = capacityOverlaid || o.it.CapacityOverlaid
		for j := range o.it.Offerings {
			off := &o.it.Offerings[j]
			if o.it.compatibleOffering(off, launchReqs, ps.unavailable) {
				capacityTypes[off.CapacityType] = true
			}
		}
	}
	reqs := launchReqs.Copy()
	reqs.Add(&Requirement{Key: LabelInstanceType, values: sortedUnique(names)})
	reqs.Add(&Requirement{Key: LabelCapacityType, values: sortedKeys(capacityTypes)})

	launchType, launch := launchChoice(options, reqs, ps.unavailable)
	cp := ClaimPlan{
		Name:                fmt.Sprintf("%s-%d", ps.Name, cl.index),
		NodePool:            ps.Name,
		Requirements:        reqs.Specs(),
		InstanceTypeOptions: names,
		InstanceType:        launchType,
		Zone:                launch.Zone,
		CapacityType:        launch.CapacityType,
		Price:               launch.Price,
		ReservationID:       launch.ReservationID,
		Requests:            cl.requests,
		Pods:                cl.pods,
		PodNames:            podNames(cl.pods),
		MinValuesRelaxed:    relaxed,
		PriceOverlayApplied: priceOverlaid, CapacityOverlayApplied: capacityOverlaid,
	}
	cp.Why = s.why(cl, options, fitCount, truncated, cp)
	return cp, true
}

// launchChoice picks the capacity type by precedence among the options' compatible offerings, then
// the cheapest offering of that capacity type (ties: option order, then zone).
func launchChoice(options []*candidate, reqs Requirements, unavailable UnavailableOfferings) (string, Offering) {
	var bestType string
	var best Offering
	found := false
	for _, o := range options {
		for j := range o.it.Offerings {
			off := o.it.Offerings[j]
			if !o.it.compatibleOffering(&off, reqs, unavailable) {
				continue
			}
			if !found {
				bestType, best, found = o.it.Name, off, true
				continue
			}
			c := CompareCapacityTypes(off.CapacityType, best.CapacityType)
			if c < 0 || (c == 0 && (off.Price < best.Price || (off.Price == best.Price && o.it.Name == bestType && off.Zone < best.Zone))) {
				bestType, best = o.it.Name, off
			}
		}
	}
	return bestType, best
}

func (s *solver) failClaim(cl *claim, c Constraint, detail string) {
	if s.res != nil {
		s.releaseReservation(cl)
	}
	r := Rejection{NodePool: cl.pool.Name, Constraint: c, Detail: detail}
	for _, pod := range cl.pods {
		s.failed = append(s.failed, newPodFailure(pod, "", []Rejection{r}))
	}
}

// why explains the claim: the pool chosen and those skipped, what the pods need, and how the instance
// types were picked.
func (s *solver) why(cl *claim, options []*candidate, fitCount int, truncated bool, cp ClaimPlan) string {
	var b strings.Builder
	fmt.Fprintf(&b, "nodepool %s (weight %d)", cl.pool.Name, cl.pool.Weight)
	var skipped []string
	for _, ps := range s.pools {
		if ps == cl.pool {
			break
		}
		skipped = append(skipped, ps.Name)
	}
	if len(skipped) > 0 {
		fmt.Fprintf(&b, " after heavier nodepools %s could not take the first pod", strings.Join(skipped, ", "))
	}
	if cl.repacked {
		fmt.Fprintf(&b, "; %d pod(s) request %s; re-packed with the claims of the same requirements toward their LP mix of instance types, fits %s", len(cl.pods), cl.requests, cl.target.it.Name)
	} else {
		fmt.Fprintf(&b, "; %d pod(s) request %s; packed toward %s, the type with the lowest cost for the remaining demand", len(cl.pods), cl.requests, cl.target.it.Name)
	}
	fmt.Fprintf(&b, "; %d of %d compatible instance types fit", fitCount, len(cl.candidates))
	if truncated {
		fmt.Fprintf(&b, ", the %d cheapest are offered", len(options))
	}
	fmt.Fprintf(&b, "; launch prefers %s %s in %s at $%.4f/h", cp.InstanceType, cp.CapacityType, cp.Zone, cp.Price)
	if s.res == nil {
		return b.String()
	}
	if cp.ReservationID != "" {
		fmt.Fprintf(&b, ", one of the instances capacity reservation %s takes", cp.ReservationID)
		return b.String()
	}
	for _, id := range s.usedUpReservations(cl, options) {
		fmt.Fprintf(&b, "; %s", s.res.describe(id))
	}
	return b.String()
}
