package disruption

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// priceReplacements applies the price rule to the claims a simulation opened to replace cands,
// which cost total together. One claim keeps the options whose worst price is below total, as
// Karpenter does. Several share the saving: with p the price the scheduler found for each and
// slack = total - Σp, each keeps the options whose worst price is below its p + slack/n, so the
// replacements cost less than the nodes whichever of their options the launches take.
func (e *engine) priceReplacements(cands []*candidate, total float64, claims []scheduling.ClaimPlan) ([]scheduling.ClaimPlan, string) {
	slack := total
	for _, cp := range claims {
		slack -= cp.Price
	}
	if slack <= 0 && len(claims) > 1 {
		return nil, fmt.Sprintf("the %d new nodes the pods need cost $%.4f/h, not less than the $%.4f/h of the nodes", len(claims), total-slack, total)
	}
	out := make([]scheduling.ClaimPlan, len(claims))
	for i, cp := range claims {
		limit := total
		if len(claims) > 1 {
			limit = cp.Price + slack/float64(len(claims))
		}
		priced, why := e.priceReplacement(cands, cp, limit, len(claims) == 1)
		if why != "" {
			if len(claims) > 1 {
				why = fmt.Sprintf("replacement %d of %d: %s", i+1, len(claims), why)
			}
			return nil, why
		}
		out[i] = priced
	}
	return out, ""
}

// priceReplacement applies Karpenter's price rule to one claim a simulation opened to replace
// cands: its instance-type options keep only the types whose worst price, in the capacity type a
// launch would take, is below limit (what the candidates cost together, when it is the only one). All-spot candidates replaced by
// spot need Options.SpotToSpotConsolidation, and a single one needs MinSpotToSpotTypes cheaper
// types and launches with the cheapest of them; otherwise a replacement that may be spot or
// on-demand is pinned to spot, so that a failed spot launch cannot fall back to on-demand that costs
// more. It returns the adjusted claim, or why there is no cheaper replacement.
func (e *engine) priceReplacement(cands []*candidate, cp scheduling.ClaimPlan, limit float64, alone bool) (scheduling.ClaimPlan, string) {
	reqs, err := scheduling.RequirementsFromSpecs(cp.Requirements)
	if err != nil {
		return cp, fmt.Sprintf("the replacement's requirements cannot be read: %v", err)
	}
	allSpot := true
	for _, c := range cands {
		allSpot = allSpot && c.node.CapacityType == scheduling.CapacityTypeSpot
	}
	ct := reqs.Get(scheduling.LabelCapacityType)
	allows := func(v string) bool { return ct == nil || ct.Has(v) }
	catalog := e.catalog(cp.NodePool)
	var types []*scheduling.InstanceType
	for _, name := range cp.InstanceTypeOptions {
		if it, ok := catalog[name]; ok {
			types = append(types, it)
		}
	}
	spotToSpot := allSpot && allows(scheduling.CapacityTypeSpot)
	if spotToSpot {
		if !e.in.Options.SpotToSpotConsolidation {
			return cp, "the nodes are spot and their replacement would be spot, but spot-to-spot consolidation is disabled"
		}
		reqs.Add(scheduling.MustRequirement(scheduling.LabelCapacityType, scheduling.OpIn, scheduling.CapacityTypeSpot))
	}
	types = cheaperThan(types, reqs, e.in.Unavailable, limit)
	if !spotToSpot && allows(scheduling.CapacityTypeSpot) && allows(scheduling.CapacityTypeOnDemand) {
		reqs.Add(scheduling.MustRequirement(scheduling.LabelCapacityType, scheduling.OpIn, scheduling.CapacityTypeSpot))
		types = slices.DeleteFunc(types, func(it *scheduling.InstanceType) bool { return !it.HasAvailableOffering(reqs, e.in.Unavailable) })
	}
	if len(cands) > 1 && alone {
		types = withoutSameTypeAtHigherPrice(types, cands, reqs, e.in.Unavailable)
	}
	if len(types) == 0 {
		return cp, fmt.Sprintf("no instance type that holds the pods costs less than $%.4f/h", limit)
	}
	scheduling.OrderByPrice(types, reqs, e.in.Unavailable)
	if spotToSpot && len(cands) == 1 {
		if len(types) < MinSpotToSpotTypes {
			return cp, fmt.Sprintf("spot-to-spot replacement needs at least %d cheaper spot instance types, found %d", MinSpotToSpotTypes, len(types))
		}
		types = truncateKeepingMinValues(types, reqs, MinSpotToSpotTypes)
	}
	if why := minValuesUnmet(types, reqs); why != "" {
		return cp, why
	}
	names := make([]string, len(types))
	for i, it := range types {
		names[i] = it.Name
	}
	reqs.Add(scheduling.MustRequirement(scheduling.LabelInstanceType, scheduling.OpIn, names...))
	out := cp
	out.Requirements = reqs.Specs()
	out.InstanceTypeOptions = names
	out.InstanceType, out.Zone, out.CapacityType, out.Price, out.ReservationID = "", "", "", 0, ""
	var best scheduling.Offering
	found := false
	for _, it := range types {
		o, ok := it.LaunchOffering(reqs, e.in.Unavailable)
		if !ok {
			continue
		}
		if !found || scheduling.CompareCapacityTypes(o.CapacityType, best.CapacityType) < 0 ||
			(o.CapacityType == best.CapacityType && o.Price < best.Price) {
			best, found = o, true
			out.InstanceType = it.Name
		}
	}
	if !found {
		return cp, "no offering of the cheaper instance types is available"
	}
	out.Zone, out.CapacityType, out.Price, out.ReservationID = best.Zone, best.CapacityType, best.Price, best.ReservationID
	out.Why = fmt.Sprintf("%s Consolidation keeps the %d %s options whose price is below $%.4f/h, so that the replacements cost less than the nodes they replace.",
		cp.Why, len(names), strings.Join(reqs.Get(scheduling.LabelCapacityType).Values(), "/"), limit)
	return out, ""
}

// cheaperThan keeps the types whose worst launch price under reqs is below limit.
func cheaperThan(types []*scheduling.InstanceType, reqs scheduling.Requirements, unavailable scheduling.UnavailableOfferings, limit float64) []*scheduling.InstanceType {
	var out []*scheduling.InstanceType
	for _, it := range types {
		if worstLaunchPrice(it, reqs, unavailable) < limit {
			out = append(out, it)
		}
	}
	return out
}

// worstLaunchPrice is the highest price among the type's usable offerings of the capacity type a
// launch under reqs takes (reserved, then spot, then on-demand), or +Inf when it has none.
func worstLaunchPrice(it *scheduling.InstanceType, reqs scheduling.Requirements, unavailable scheduling.UnavailableOfferings) float64 {
	for _, ct := range []string{scheduling.CapacityTypeReserved, scheduling.CapacityTypeSpot, scheduling.CapacityTypeOnDemand} {
		if r := reqs.Get(scheduling.LabelCapacityType); r != nil && !r.Has(ct) {
			continue
		}
		worst, found := 0.0, false
		for i := range it.Offerings {
			o := &it.Offerings[i]
			if o.CapacityType == ct && usable(it, o, reqs, unavailable) {
				worst, found = max(worst, o.Price), true
			}
		}
		if found {
			return worst
		}
	}
	return math.Inf(1)
}

// usable reports whether a launch under reqs could take the offering.
func usable(it *scheduling.InstanceType, o *scheduling.Offering, reqs scheduling.Requirements, unavailable scheduling.UnavailableOfferings) bool {
	if !o.Available || unavailable.Blocks(it.Name, o) {
		return false
	}
	if o.CapacityType == scheduling.CapacityTypeReserved && (o.ReservationID == "" || o.ReservationCapacity <= 0) {
		return false
	}
	if z := reqs.Get(scheduling.LabelZone); z != nil && !z.Has(o.Zone) {
		return false
	}
	if c := reqs.Get(scheduling.LabelCapacityType); c != nil && !c.Has(o.CapacityType) {
		return false
	}
	if r := reqs.Get(scheduling.LabelCapacityReservationID); r != nil && o.ReservationID != "" && !r.Has(o.ReservationID) {
		return false
	}
	return true
}

// withoutSameTypeAtHigherPrice drops, when the options include an instance type some candidate
// already runs, every option that costs at least as much as the cheapest such candidate: replacing
// several nodes with one of the same type as one of them only deletes the others, which a smaller
// command does better. It applies to a command's only replacement: when several repack many nodes,
// one of them may well be of a type some of those nodes run.
func withoutSameTypeAtHigherPrice(types []*scheduling.InstanceType, cands []*candidate, reqs scheduling.Requirements, unavailable scheduling.UnavailableOfferings) []*scheduling.InstanceType {
	limit := math.Inf(1)
	for _, it := range types {
		for _, c := range cands {
			if c.node.InstanceType == it.Name {
				limit = min(limit, c.node.Price)
			}
		}
	}
	if math.IsInf(limit, 1) {
		return types
	}
	return cheaperThan(types, reqs, unavailable, limit)
}

// minValuesUnmet returns why the types do not meet a requirement's minValues, or "".
func minValuesUnmet(types []*scheduling.InstanceType, reqs scheduling.Requirements) string {
	for _, key := range reqs.Keys() {
		r := reqs.Get(key)
		if r.MinValues <= 0 {
			continue
		}
		if n := distinctValues(types, key); n < r.MinValues {
			return fmt.Sprintf("the cheaper instance types have %d values of %s, minValues is %d", n, key, r.MinValues)
		}
	}
	return ""
}

func distinctValues(types []*scheduling.InstanceType, key string) int {
	seen := map[string]bool{}
	for _, it := range types {
		if r := it.Requirements.Get(key); r != nil {
			for _, v := range r.Values() {
				seen[v] = true
			}
		}
	}
	return len(seen)
}

// truncateKeepingMinValues keeps the first n types, or more while a minValues needs them.
func truncateKeepingMinValues(types []*scheduling.InstanceType, reqs scheduling.Requirements, n int) []*scheduling.InstanceType {
	for k := min(n, len(types)); k < len(types); k++ {
		if minValuesUnmet(types[:k], reqs) == "" {
			return types[:k]
		}
	}
	return types
}
