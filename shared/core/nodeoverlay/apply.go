package nodeoverlay

import (
	"fmt"
	"maps"
	"slices"

	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// Pool is one NodePool's instance types, as Apply overlays them.
type Pool struct {
	Name string
	// Labels are the pool's template labels (spec.template.metadata.labels), which overlays may select on.
	Labels map[string]string
	Types  []*scheduling.InstanceType
}

// Conflict is an overlay applied nowhere because an overlay of the same weight, taken before it, already
// priced an offering (or set a resource) it selects.
type Conflict struct {
	Overlay, With string
	Weight        int32
	// NodePool, InstanceType and What (a zone/capacity-type offering, or a resource) are the first place
	// found where both apply.
	NodePool, InstanceType, What string
}

func (c Conflict) String() string {
	return fmt.Sprintf("NodeOverlay %s is not applied: it conflicts with NodeOverlay %s (both weight %d set %s of %s in NodePool %s); "+
		"give one a higher weight", c.Overlay, c.With, c.Weight, c.What, c.InstanceType, c.NodePool)
}

// Result is Apply's answer.
type Result struct {
	// Types are each pool's instance types with the overlays applied, by pool name, in the pool's order.
	Types map[string][]*scheduling.InstanceType
	// Conflicts are the overlays left out, in the order they were taken.
	Conflicts []Conflict
}

// Apply applies overlays to every pool's instance types (see the package comment). Overlays need not be
// ordered. Conflicts are detected across all pools at once, so an overlay is applied everywhere or
// nowhere. It reads each (overlay, pool, type) once: O(overlays × pools × types × offerings).
func Apply(overlays []Overlay, pools []Pool) Result {
	ordered := slices.Clone(overlays)
	order(ordered)
	st := make([]map[int]*update, len(pools)) // per pool: type index → what overlays set
	poolReqs := make([]scheduling.Requirements, len(pools))
	for i, p := range pools {
		st[i] = map[int]*update{}
		poolReqs[i] = scheduling.RequirementsFromLabels(p.Labels)
		poolReqs[i].Add(scheduling.MustRequirement(scheduling.LabelNodePool, scheduling.OpIn, p.Name))
	}
	var res Result
	for _, ov := range ordered {
		var c change
		if ov.Price != "" {
			var err error
			if c, err = parseChange(ov.Price); err != nil {
				continue // FromAPI refuses it; an Overlay built by hand is skipped
			}
		}
		ms := matches(ov, pools, poolReqs)
		if conflict, found := conflictOf(ov, ms, pools, st); found {
			res.Conflicts = append(res.Conflicts, conflict)
			continue
		}
		for _, m := range ms {
			u := st[m.pool][m.typ]
			if u == nil {
				u = &update{offerings: map[int]*priceSet{}, capacity: map[string]*capacitySet{}}
				st[m.pool][m.typ] = u
			}
			if ov.Price != "" {
				for _, oi := range m.offerings {
					if ps := u.offerings[oi]; ps != nil {
						ps.lastWeight, ps.lastName = ov.Weight, ov.Name
						continue
					}
					u.offerings[oi] = &priceSet{change: c, lastWeight: ov.Weight, lastName: ov.Name}
				}
			}
			for name, v := range ov.Capacity {
				if cs := u.capacity[name]; cs != nil {
					cs.lastWeight, cs.lastName = ov.Weight, ov.Name
					continue
				}
				u.capacity[name] = &capacitySet{value: v, lastWeight: ov.Weight, lastName: ov.Name}
			}
		}
	}
	res.Types = make(map[string][]*scheduling.InstanceType, len(pools))
	for i, p := range pools {
		if len(st[i]) == 0 {
			res.Types[p.Name] = p.Types
			continue
		}
		out := slices.Clone(p.Types)
		for ti, u := range st[i] {
			out[ti] = u.applyTo(p.Types[ti])
		}
		res.Types[p.Name] = out
	}
	return res
}

// update is what the overlays taken so far set on one instance type of one pool.
type update struct {
	offerings map[int]*priceSet // by offering index
	capacity  map[string]*capacitySet
}

// priceSet is an offering's price change (the first overlay's) and the last overlay that selected it.
type priceSet struct {
	change     change
	lastWeight int32
	lastName   string
}

// capacitySet is a resource's value (the first overlay's) and the last overlay that set it.
type capacitySet struct {
	value      int64
	lastWeight int32
	lastName   string
}

// match is an instance type of a pool an overlay selects, with the offerings it selects.
type match struct {
	pool, typ int
	offerings []int
}

// matches lists where ov applies: every type of every pool it selects with at least one offering.
func matches(ov Overlay, pools []Pool, poolReqs []scheduling.Requirements) []match {
	var out []match
	for pi, p := range pools {
		if poolReqs[pi].Intersects(ov.Requirements) != nil {
			continue
		}
		for ti, it := range p.Types {
			if !selectsType(ov.Requirements, poolReqs[pi], it.Requirements) {
				continue
			}
			var offs []int
			for oi := range it.Offerings {
				if selectsOffering(ov.Requirements, &it.Offerings[oi]) {
					offs = append(offs, oi)
				}
			}
			if len(offs) > 0 {
				out = append(out, match{pool: pi, typ: ti, offerings: offs})
			}
		}
	}
	return out
}

// selectsType reports whether overlay requirements select a type of a pool, as Karpenter checks it: every
// key the overlay requires with In, Exists, Gt or Lt must be defined by the type or the pool, and where
// both define a key they must share a value.
func selectsType(ov, pool, it scheduling.Requirements) bool {
	for key, r := range ov {
		if it.Has(key) || pool.Has(key) {
			continue
		}
		if op := r.Operator(); op != scheduling.OpNotIn && op != scheduling.OpDoesNotExist {
			return false
		}
	}
	return it.Intersects(ov) == nil
}

// absent is the requirement of a label an offering does not carry.
func absent(key string) *scheduling.Requirement {
	return scheduling.MustRequirement(key, scheduling.OpDoesNotExist)
}

// selectsOffering reports whether overlay requirements allow an offering's zone, zone id (when known),
// capacity type and reservation (an offering outside any reservation carries no reservation label).
func selectsOffering(ov scheduling.Requirements, o *scheduling.Offering) bool {
	if r, ok := ov[scheduling.LabelZone]; ok && !r.Has(o.Zone) {
		return false
	}
	if r, ok := ov[scheduling.LabelZoneID]; ok && o.ZoneID != "" && !r.Has(o.ZoneID) {
		return false
	}
	if r, ok := ov[scheduling.LabelCapacityType]; ok && !r.Has(o.CapacityType) {
		return false
	}
	if r, ok := ov[scheduling.LabelCapacityReservationID]; ok {
		if o.ReservationID == "" {
			return r.Intersects(absent(scheduling.LabelCapacityReservationID))
		}
		return r.Has(o.ReservationID)
	}
	return true
}

// conflictOf finds the first place where ov sets what an overlay of its weight, taken before it, set.
func conflictOf(ov Overlay, ms []match, pools []Pool, st []map[int]*update) (Conflict, bool) {
	for _, m := range ms {
		u := st[m.pool][m.typ]
		if u == nil {
			continue
		}
		it := pools[m.pool].Types[m.typ]
		at := Conflict{Overlay: ov.Name, Weight: ov.Weight, NodePool: pools[m.pool].Name, InstanceType: it.Name}
		if ov.Price != "" {
			for _, oi := range m.offerings {
				if ps := u.offerings[oi]; ps != nil && ps.lastWeight == ov.Weight {
					o := it.Offerings[oi]
					at.With, at.What = ps.lastName, fmt.Sprintf("the price of the %s %s offering", o.Zone, o.CapacityType)
					return at, true
				}
			}
		}
		for _, name := range slices.Sorted(maps.Keys(ov.Capacity)) {
			if cs := u.capacity[name]; cs != nil && cs.lastWeight == ov.Weight {
				at.With, at.What = cs.lastName, "the capacity "+name
				return at, true
			}
		}
	}
	return Conflict{}, false
}

// applyTo returns a copy of it with the update's prices and capacity.
func (u *update) applyTo(it *scheduling.InstanceType) *scheduling.InstanceType {
	out := *it
	if len(u.offerings) > 0 {
		out.Offerings = slices.Clone(it.Offerings)
		for oi, ps := range u.offerings {
			o := &out.Offerings[oi]
			o.Price, o.PriceOverlaid = ps.change.apply(o.Price), true
		}
	}
	if len(u.capacity) > 0 {
		out.Capacity.Extended, out.Allocatable.Extended = maps.Clone(it.Capacity.Extended), maps.Clone(it.Allocatable.Extended)
		if out.Capacity.Extended == nil {
			out.Capacity.Extended = map[string]int64{}
		}
		if out.Allocatable.Extended == nil {
			out.Allocatable.Extended = map[string]int64{}
		}
		for name, cs := range u.capacity {
			if cs.value == 0 {
				delete(out.Capacity.Extended, name)
				delete(out.Allocatable.Extended, name)
				continue
			}
			out.Capacity.Extended[name], out.Allocatable.Extended[name] = cs.value, cs.value
		}
		out.CapacityOverlaid = true
	}
	return &out
}
