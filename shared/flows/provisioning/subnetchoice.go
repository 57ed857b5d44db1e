package provisioning

import (
	"cmp"
	"maps"
	"slices"
	"sync"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/nodeclass"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// Subnet choice, as Karpenter's subnet provider makes it: a launch goes, in each zone, into the subnet
// with the most free addresses, less the addresses predicted taken by launches made since the count was
// read; a subnet a fleet found full (InsufficientFreeAddressesInSubnet) is marked for
// state.UnavailableCapacityTTL and passed over for the zone's next subnet, and a zone counts as
// unavailable for offerings only while every one of its subnets is marked.

// runSubnets is what one run knows of the subnets its launches go into, beyond the resolutions' counts:
// which are marked (read from the table, or found full during the run) and the addresses this run's
// launches take, reserved while a fleet call is out so that concurrent launches spread over a zone's
// subnets. It lives for one run (or one PrepareLaunches), with one entry per subnet marked or launched
// into: bounded by the subnets the EC2NodeClasses select. Safe for concurrent use.
type runSubnets struct {
	mu     sync.Mutex
	marked map[string]bool
	used   map[string]int64
}

// newRunSubnets starts a run's view with the table's marks.
func newRunSubnets(marks []state.UnavailableSubnet) *runSubnets {
	r := &runSubnets{marked: map[string]bool{}, used: map[string]int64{}}
	for _, m := range marks {
		r.marked[m.SubnetID] = true
	}
	return r
}

// isMarked reports whether the subnet is marked unavailable.
func (r *runSubnets) isMarked(id string) bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.marked[id]
}

// classSubnets are one EC2NodeClass's subnets as its resolution read them, with the addresses predicted
// taken since by claims launched into them (since: by subnet id, from the claim list the run read).
type classSubnets struct {
	byZone map[string][]nodeclass.Subnet
	since  map[string]int64
	run    *runSubnets
}

// newClassSubnets groups the resolution's subnets by zone, most free addresses first, and counts the
// addresses of claims launched into them at or after the resolution read them: each such claim's
// instance type's pods (pods is the capacity of a type by name, 0 when unknown), as Karpenter predicts a
// node's use by its pods.
func newClassSubnets(res nodeclass.Resolution, claims []state.Claim, pods func(instanceType string) int64,
	run *runSubnets) *classSubnets {
	cs := &classSubnets{byZone: map[string][]nodeclass.Subnet{}, since: map[string]int64{}, run: run}
	ids := map[string]bool{}
	for _, s := range res.Subnets {
		cs.byZone[s.Zone] = append(cs.byZone[s.Zone], s)
		ids[s.ID] = true
	}
	for _, c := range claims {
		if c.SubnetID == "" || !ids[c.SubnetID] || c.LaunchedAt == nil || c.LaunchedAt.Before(res.SubnetsReadAt) ||
			c.Lifecycle == state.Deleted {
			continue
		}
		cs.since[c.SubnetID] += pods(c.InstanceType)
	}
	return cs
}

// zones are the zones the class has a subnet in.
func (cs *classSubnets) zones() []string { return slices.Sorted(maps.Keys(cs.byZone)) }

// zoneMarked reports whether every subnet of the zone is marked unavailable.
func (cs *classSubnets) zoneMarked(zone string) bool {
	subnets := cs.byZone[zone]
	for _, s := range subnets {
		if !cs.run.isMarked(s.ID) {
			return false
		}
	}
	return len(subnets) > 0
}

// free is the subnet's predicted free addresses; the caller holds run.mu.
func (cs *classSubnets) free(s nodeclass.Subnet) int64 {
	return int64(s.AvailableIPs) - cs.since[s.ID] - cs.run.used[s.ID]
}

// bestLocked is the zone's unmarked subnet with the most predicted free addresses (ties by id); the
// caller holds run.mu.
func (cs *classSubnets) bestLocked(zone string) (nodeclass.Subnet, bool) {
	var best nodeclass.Subnet
	found := false
	for _, s := range cs.byZone[zone] {
		if cs.run.marked[s.ID] {
			continue
		}
		if !found || cmp.Or(cmp.Compare(cs.free(best), cs.free(s)), cmp.Compare(s.ID, best.ID)) < 0 {
			best, found = s, true
		}
	}
	return best, found
}

// hold picks a subnet in each of the zones and reserves in it the addresses ips(zone) predicts the
// launch takes there, until the launch settles. A zone whose subnets are all marked gets none.
func (cs *classSubnets) hold(zones []string, ips func(zone string) int64) *subnetHold {
	h := &subnetHold{class: cs, ips: ips, picked: map[string]nodeclass.Subnet{}, reserved: map[string]int64{}}
	cs.run.mu.Lock()
	defer cs.run.mu.Unlock()
	for _, z := range zones {
		h.pickLocked(z)
	}
	return h
}

// subnetHold is one launch's subnets: the one picked in each zone and the addresses reserved in them.
// A nil hold (a plan built without a run's view) picks nothing and settles nothing.
type subnetHold struct {
	class    *classSubnets
	ips      func(zone string) int64
	picked   map[string]nodeclass.Subnet
	reserved map[string]int64
}

// pickLocked picks the zone's best subnet and reserves the launch's addresses there; the caller holds
// run.mu.
func (h *subnetHold) pickLocked(zone string) {
	s, ok := h.class.bestLocked(zone)
	if !ok {
		delete(h.picked, zone)
		return
	}
	h.picked[zone] = s
	n := h.ips(zone)
	h.reserved[s.ID] += n
	h.class.run.used[s.ID] += n
}

// subnet is the subnet picked in zone.
func (h *subnetHold) subnet(zone string) (nodeclass.Subnet, bool) {
	if h == nil {
		return nodeclass.Subnet{}, false
	}
	s, ok := h.picked[zone]
	return s, ok
}

// full marks a subnet a fleet found without free addresses, for the rest of the run (the caller records
// it in the table), gives back what the launch reserved there and picks the zone's next subnet: its id,
// or "" when every subnet of the zone is marked.
func (h *subnetHold) full(ex instance.ExhaustedSubnet) string {
	if h == nil {
		return ""
	}
	run := h.class.run
	run.mu.Lock()
	defer run.mu.Unlock()
	run.marked[ex.SubnetID] = true
	run.used[ex.SubnetID] -= h.reserved[ex.SubnetID]
	delete(h.reserved, ex.SubnetID)
	zone := ex.Zone
	if zone == "" {
		for z, s := range h.picked {
			if s.ID == ex.SubnetID {
				zone = z
			}
		}
	}
	if s, ok := h.picked[zone]; !ok || s.ID != ex.SubnetID {
		// Not the zone's current pick (a repeated answer): keep the pick.
		return h.picked[zone].ID
	}
	h.pickLocked(zone)
	return h.picked[zone].ID
}

// settle ends the launch's reservations: what it reserved is given back, and each instance it launched
// counts its pods (podsOf its instance type) against the subnet it went into (its own, else the zone's
// pick). With unknown set (the launch's outcome is unknown) the reservations stay as the prediction.
func (h *subnetHold) settle(launched []instance.Instance, podsOf func(instanceType string) int64, unknown bool) {
	if h == nil || unknown {
		return
	}
	run := h.class.run
	run.mu.Lock()
	defer run.mu.Unlock()
	for id, n := range h.reserved {
		run.used[id] -= n
	}
	clear(h.reserved)
	for _, inst := range launched {
		id := inst.SubnetID
		if id == "" {
			id = h.picked[inst.Zone].ID
		}
		if id != "" {
			run.used[id] += podsOf(inst.InstanceType)
		}
	}
}
