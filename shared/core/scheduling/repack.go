package scheduling

import (
	"fmt"
	"maps"
	"math"

	corev1 "k8s.io/api/core/v1"
)

// repackClaims re-packs the new claims after placement and spread repair. Greedy placement fills claims
// class by class, largest first; under zone spread each zone's claims then take a third of every class
// and the zone's last claims get whatever shapes are left, stranding CPU or memory. Here the claims of
// one NodePool with the same requirements (so the same zone when narrowed to one, and the same
// candidate types at the same prices) form a group: unless the group's cost is already within
// repackSlack of its LP lower bound, its pods are packed anew (lpRepack) and the result replaces the
// group's claims when it costs less. Pods only move between claims with identical requirements, so
// every zone and other non-hostname domain keeps its counts; claims holding a pod with host ports or
// with any hostname topology rule (owned, inverse or counted) are left alone, and so are claims that
// hold an instance of a capacity reservation and pools with limits or minValues (whose reservations and
// checks depend on each claim's options).
func (s *solver) repackClaims() {
	var groups [][]*claim
	index := map[string]int{}
	for _, cl := range s.claims {
		if !s.repackable(cl) {
			continue
		}
		key := cl.pool.Name + "\x00" + cl.reqs.String()
		i, ok := index[key]
		if !ok {
			i = len(groups)
			index[key] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], cl)
	}
	for _, g := range groups {
		if len(g) > 1 {
			s.repackGroup(g)
		}
	}
}

// repackSlack is how far above the LP lower bound a group's cost must be for repackClaims to try.
const repackSlack = 0.01

// repackable reports whether a claim's pods may be moved to other claims with the same requirements.
func (s *solver) repackable(cl *claim) bool {
	ps := cl.pool
	if len(cl.pods) == 0 || ps.minValues || ps.limits.set || cl.reservation != "" {
		return false
	}
	for i, k := range cl.classes {
		if len(k.hostPorts) > 0 || touchesHostname(cl.steps[i].topo) {
			return false
		}
	}
	return true
}

// touchesHostname reports whether a topology has any rule on, or is counted by any group of, hostname.
func touchesHostname(ct *classTopology) bool {
	if ct == nil {
		return false
	}
	for _, set := range [][]*topoGroup{ct.owned, ct.inverse, ct.matching} {
		for _, g := range set {
			if g.key == LabelHostname {
				return true
			}
		}
	}
	return false
}

// repackKind is a set of identical pods being re-packed: the same class at the same relaxation step.
type repackKind struct {
	class *podClass
	step  *classStep
	pods  []*corev1.Pod
}

// kindCount is a number of pods of one kind (an index into the group's kinds).
type kindCount struct{ kind, n int }

// repackOption is an instance type a group's nodes may use, at the price a launch of it would pay
// under the group's requirements (its LaunchOffering), as Plan.TotalPrice counts it.
type repackOption struct {
	cand  *candidate
	price float64
}

// repackGroup re-packs the pods of claims that share pool and requirements, if that is cheaper.
func (s *solver) repackGroup(claims []*claim) {
	first := claims[0]
	reqs := first.reqs
	if s.res != nil {
		// The group holds no reservation: price its nodes as they launch without one.
		reqs = reqs.Copy()
		reqs.Add(MustRequirement(LabelCapacityReservationID, OpNotIn, s.res.ids()...))
	}
	var options []repackOption
	for _, c := range first.candidates {
		if o, ok := c.it.LaunchOffering(reqs, first.pool.unavailable); ok {
			options = append(options, repackOption{cand: c, price: o.Price})
		}
	}
	type kindKey struct {
		class *podClass
		step  *classStep
	}
	var kinds []repackKind
	index := map[kindKey]int{}
	oldCost := 0.0
	var total Resources
	for _, cl := range claims {
		_, p := cheapestFitting(options, cl.requests)
		oldCost += p
		total = total.Add(cl.requests)
		for i, pod := range cl.pods {
			key := kindKey{cl.classes[i], cl.steps[i]}
			k, ok := index[key]
			if !ok {
				k = len(kinds)
				index[key] = k
				kinds = append(kinds, repackKind{class: key.class, step: key.step})
			}
			kinds[k].pods = append(kinds[k].pods, pod)
		}
	}
	if math.IsInf(oldCost, 1) {
		return
	}
	// No packing beats the LP relaxation: leave a group alone that is already close to it.
	caps := make([]Capacity, len(options))
	for i, o := range options {
		caps[i] = Capacity{CPU: float64(o.cand.usable.CPU), Memory: float64(o.cand.usable.Memory), Price: o.price}
	}
	if oldCost <= (1+repackSlack)*LowerBound(float64(total.CPU), float64(total.Memory), caps) {
		return
	}
	items := make([]kindCount, len(kinds))
	for i, k := range kinds {
		items[i] = kindCount{kind: i, n: len(k.pods)}
	}
	p := &repacker{kinds: kinds, options: options}
	bins, cost := p.lpRepack(items, 0)
	if bins == nil || cost >= oldCost*(1-1e-9) {
		return
	}
	next := make([]int, len(kinds)) // pods of each kind handed out so far
	for i, bin := range bins {
		var cl *claim
		if i < len(claims) {
			cl = claims[i]
		} else {
			ps := first.pool
			cl = &claim{pool: ps, index: ps.claims, host: fmt.Sprintf("%s-%d", ps.Name, ps.claims), reqs: first.reqs,
				candidates: first.candidates, sigs: maps.Clone(first.sigs), roomiest: first.roomiest, state: first.state}
			ps.claims++
			s.claims = append(s.claims, cl)
		}
		cl.pods, cl.classes, cl.steps, cl.requests = nil, nil, nil, bin.used
		for _, kc := range bin.content {
			k := &kinds[kc.kind]
			cl.pods = append(cl.pods, k.pods[next[kc.kind]:next[kc.kind]+kc.n]...)
			next[kc.kind] += kc.n
			for range kc.n {
				cl.classes = append(cl.classes, k.class)
				cl.steps = append(cl.steps, k.step)
			}
		}
		cl.target, _ = cheapestFitting(options, cl.requests)
		cl.repacked = true
	}
	for _, cl := range claims[min(len(bins), len(claims)):] {
		cl.pods, cl.classes, cl.steps, cl.requests = nil, nil, nil, Resources{}
	}
}

// cheapestFitting returns the cheapest option that holds requests (ties: the earlier option), or
// +Inf when none does.
func cheapestFitting(options []repackOption, requests Resources) (*candidate, float64) {
	var best *candidate
	price := math.Inf(1)
	for _, o := range options {
		if o.price < price && requests.Fits(o.cand.usable) {
			best, price = o.cand, o.price
		}
	}
	return best, price
}

// times returns n × r.
func times(r Resources, n int) Resources {
	m := int64(n)
	out := Resources{CPU: r.CPU * m, Memory: r.Memory * m, EphemeralStorage: r.EphemeralStorage * m, Pods: r.Pods * m}
	if len(r.Extended) > 0 {
		out.Extended = make(map[string]int64, len(r.Extended))
		for k, v := range r.Extended {
			out.Extended[k] = v * m
		}
	}
	return out
}
