package provisioning

import (
	"maps"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// inFlightClaims are the claims written or launched by earlier runs whose Node is not in the snapshot as a
// node that can take pods yet (DESIGN decision 4): the solver fills them before it opens anything new, so
// pods waiting for a booting node trigger no second launch. A claim stays in flight until its Node is in
// the snapshot with the allocatable its kubelet posted (joined): a claim the lifecycle registered after the
// snapshot listed Nodes, or whose Node has not posted its status, would otherwise stand for nothing and
// its pods would launch a second node. Claims already initialized are never in flight, nor is a registered
// claim whose Node the lifecycle found gone while its instance runs (NodeLostAt: deleted with the finalizer
// stripped; it boots nothing, and its pods need capacity elsewhere). A claim carries the labels recorded for it (its pool's, the values
// its pods narrowed, its instance type's). A launched claim looks like its instance type in its zone
// and capacity type; a pending one (its launch not answered yet) like the cheapest of its instance-type
// options. A claim whose NodePool can no longer launch, or whose type is not in the catalog, still stands for its
// recorded requests, so it absorbs at least the pods it was made for.
func inFlightClaims(claims []state.Claim, nodes joinedNodes, pools []scheduling.NodePool,
	classes map[string]*readyClass) []scheduling.InFlightClaim {
	byName := map[string]scheduling.NodePool{}
	for _, p := range pools {
		byName[p.Name] = p
	}
	overlaid := overlaidTypes{pools: byName, classes: classes, index: map[string]map[string]*scheduling.InstanceType{}}
	var out []scheduling.InFlightClaim
	for _, c := range claims {
		if (c.Lifecycle != state.Pending && c.Lifecycle != state.Launched && c.Lifecycle != state.Registered) || nodes.has(c) ||
			c.NodeLostAt != nil {
			continue
		}
		f := scheduling.InFlightClaim{Name: c.Name, NodePool: c.NodePool, Labels: map[string]string{}}
		pool, known := byName[c.NodePool]
		if known {
			maps.Copy(f.Labels, pool.Labels)
			f.Taints, f.StartupTaints = pool.Taints, pool.StartupTaints
		}
		typeName := c.InstanceType
		if typeName == "" && len(c.InstanceTypes) > 0 {
			typeName = c.InstanceTypes[0]
		}
		var it *scheduling.InstanceType
		if rc := classes[c.NodeClass]; rc != nil {
			it = rc.byName[typeName]
		}
		if o := overlaid.of(c.NodePool, typeName); o != nil {
			it = o // with the extended resources a NodeOverlay gives it, which its pods may need
		}
		if it != nil {
			labels := it.Requirements.Labels()
			maps.Copy(f.Labels, labels)
			f.Capacity, f.Allocatable = it.Capacity, it.Allocatable
		} else {
			f.Allocatable = parseRequests(c.Requests)
			f.Capacity = f.Allocatable
		}
		// The claim's own labels: the values its pods narrowed (team=a), and once launched its instance
		// type's. Without them a pod selecting team=a would not fit the claim made for it.
		maps.Copy(f.Labels, c.Labels)
		if c.Zone != "" {
			f.Labels[scheduling.LabelZone] = c.Zone
		}
		if c.CapacityType != "" {
			f.Labels[scheduling.LabelCapacityType] = c.CapacityType
		}
		if typeName != "" {
			f.Labels[scheduling.LabelInstanceType] = typeName
		}
		if c.Lifecycle == state.Pending && c.InstanceID == "" {
			// Not launched yet, so EC2's count of the reservation does not show it: the solver takes it off.
			f.PendingReservationID = c.ReservationID
		}
		out = append(out, f)
	}
	return out
}

// overlaidTypes finds a pool's instance type as NodeOverlays left it, for the pools an overlay changed
// (their types are not their class's); each such pool is indexed once per run, on first use.
type overlaidTypes struct {
	pools   map[string]scheduling.NodePool
	classes map[string]*readyClass
	index   map[string]map[string]*scheduling.InstanceType // pool → type name → type; nil: not overlaid
}

// of is the overlaid type of pool named name, or nil when no overlay changed the pool's types.
func (o overlaidTypes) of(pool, name string) *scheduling.InstanceType {
	idx, done := o.index[pool]
	if !done {
		p, ok := o.pools[pool]
		rc := o.classes[NodeClassRefName(p)]
		if ok && rc != nil && len(p.InstanceTypes) > 0 && (len(p.InstanceTypes) != len(rc.types) || &p.InstanceTypes[0] != &rc.types[0]) {
			idx = make(map[string]*scheduling.InstanceType, len(p.InstanceTypes))
			for _, it := range p.InstanceTypes {
				idx[it.Name] = it
			}
		}
		o.index[pool] = idx
	}
	return idx[name]
}
