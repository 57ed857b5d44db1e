package provisioning

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/nodewright/nodewright/shared/adapters/instancetypes"
	"github.com/nodewright/nodewright/shared/adapters/nodeclass"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/nodeoverlay"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/core/settings"
)

// NodeClassResolver resolves an EC2NodeClass against the account; *nodeclass.Resolver satisfies it.
type NodeClassResolver interface {
	Resolve(ctx context.Context, nc *apis.EC2NodeClass, k8sVersion string) (nodeclass.Resolution, error)
}

var (
	_ NodeClassResolver = (*nodeclass.Resolver)(nil)
	_ NodeClassResolver = (*nodeclass.Cache)(nil)
	_ ClassForgetter    = (*nodeclass.Cache)(nil)
)

// ClassForgetter drops what a caching NodeClassResolver keeps of a class; *nodeclass.Cache is one. A run
// whose launch EC2 refused because a subnet, security group, AMI or instance profile of the class's
// resolution is gone (forgetStaleClasses) tells it, so the next run resolves the class again.
type ClassForgetter interface {
	Forget(class string)
}

// readyClass is a resolved, Ready EC2NodeClass with the instance types its NodePools launch.
type readyClass struct {
	nc       *apis.EC2NodeClass
	resolved nodeclass.Resolution
	// subnets is the subnet with the most free addresses in each zone, as resolved (zone ids); choice
	// picks a launch's subnets (subnetchoice.go), nil when the class was built without a run's view.
	subnets map[string]nodeclass.Subnet
	choice  *classSubnets
	types   []*scheduling.InstanceType
	byName  map[string]*scheduling.InstanceType
	// memory are the observations the memory capacity of its types rests on, by type; a type not named
	// has the estimate, nominal memory less overhead (vmMemoryOverheadPercent).
	memory   map[string]state.MemoryObservation
	overhead float64
}

// prepareClasses resolves every EC2NodeClass the pools reference and builds its instance types from the
// catalog. It returns the usable classes and the pools that can launch; a pool whose class is missing,
// not Ready or failed to resolve is left out and named in problems, and failed says why per class.
//
// sv is the run's subnet view: the classes' subnet choice starts from its marks, with the addresses of
// the claims launched since each resolution read its subnets taken off.
func prepareClasses(ctx context.Context, r NodeClassResolver, cat *instancetypes.Catalog, prices instancetypes.Prices,
	cfg runConfig, k8sVersion string, observed observedMemory, sv subnetView) (classes map[string]*readyClass, pools []scheduling.NodePool, problems []string, failed map[string]string,
	unresolved []string) {
	classes, failed = map[string]*readyClass{}, map[string]string{}
	for _, p := range cfg.pools {
		name := NodeClassRefName(p)
		if _, done := classes[name]; !done && failed[name] == "" {
			rc, why, readFailed := prepareClass(ctx, r, cat, prices, cfg.nodeClasses[name], name, k8sVersion, cfg.region, cfg.settings, observed)
			if why == "" {
				rc.chooseSubnets(sv)
			}
			if why != "" {
				failed[name] = why
				problems = append(problems, why)
				if readFailed {
					unresolved = append(unresolved, name)
				}
			} else {
				classes[name] = rc
			}
		}
		rc, ok := classes[name]
		if !ok {
			problems = append(problems, fmt.Sprintf("NodePool %s cannot launch: %s", p.Name, failed[name]))
			continue
		}
		p.InstanceTypes = rc.types
		pools = append(pools, p)
	}
	pools, problems = withOverlays(pools, cfg.overlays, problems)
	return classes, pools, problems, failed, unresolved
}

// withOverlays gives each pool its instance types with the NodeOverlays applied (shared/core/nodeoverlay),
// once per run: the provisioner's solve, consolidation's decisions (PrepareLaunches) and the dry run
// all take their pools from prepareClasses. An overlay in conflict is named in problems.
func withOverlays(pools []scheduling.NodePool, overlays []nodeoverlay.Overlay, problems []string) ([]scheduling.NodePool, []string) {
	if len(overlays) == 0 {
		return pools, problems
	}
	in := make([]nodeoverlay.Pool, len(pools))
	for i, p := range pools {
		in[i] = nodeoverlay.Pool{Name: p.Name, Labels: p.Labels, Types: p.InstanceTypes}
	}
	res := nodeoverlay.Apply(overlays, in)
	for _, c := range res.Conflicts {
		problems = append(problems, c.String())
	}
	for i := range pools {
		pools[i].InstanceTypes = res.Types[pools[i].Name]
	}
	return pools, problems
}

// prepareClass resolves one class and builds its instance types (in region, "" when unknown) with the
// deployment's VM memory overhead (or the memory registered Nodes reported, where observed has it for the
// AMI the class launches a type with: withObservedMemory) and reserved ENIs, and its capacity
// reservations unless the ReservedCapacity gate is off; why says what makes it unusable, and readFailed
// that resolving it failed (an AWS read past its retries), not the class: another run may well succeed.
func prepareClass(ctx context.Context, r NodeClassResolver, cat *instancetypes.Catalog, prices instancetypes.Prices,
	nc *apis.EC2NodeClass, name, k8sVersion, region string, s settings.Settings, observed observedMemory) (rc *readyClass, why string, readFailed bool) {
	if nc == nil {
		return nil, fmt.Sprintf("EC2NodeClass %q is not configured", name), false
	}
	res, err := r.Resolve(ctx, nc, k8sVersion)
	if err != nil {
		return nil, fmt.Sprintf("EC2NodeClass %s: resolving: %v", name, err), true
	}
	if !res.Ready {
		return nil, fmt.Sprintf("EC2NodeClass %s is not ready: %s", name, readyMessage(res)), false
	}
	cfg, err := NodeClassConfigFrom(nc)
	if err != nil {
		return nil, err.Error(), false
	}
	overhead := s.VMMemoryOverheadPercent
	cfg.VMMemoryOverheadPercent, cfg.ReservedENIs = &overhead, s.ReservedENIs
	subnets := nodeclass.BestPerZone(res.Subnets)
	zones := slices.Sorted(maps.Keys(subnets))
	// Offerings carry their zone's id and types the region, so that zone-id and region requirements
	// (pods, NodePools, topology spread on zone-id) choose among them.
	cfg.Region, cfg.ZoneIDs = region, map[string]string{}
	for z, sn := range subnets {
		if sn.ZoneID != "" {
			cfg.ZoneIDs[z] = sn.ZoneID
		}
	}
	var reservations []instancetypes.Reservation
	if s.FeatureGates.ReservedCapacity {
		for _, cr := range res.CapacityReservations {
			reservations = append(reservations, instancetypes.Reservation{ID: cr.ID, InstanceType: cr.InstanceType, Zone: cr.AvailabilityZone, Available: cr.Available,
				Type: cr.ReservationType, Interruptible: cr.Interruptible})
		}
	}
	types, _, err := cat.BuildWithReservations(cfg, prices, zones, reservations)
	if err != nil {
		return nil, fmt.Sprintf("EC2NodeClass %s: building instance types: %v", name, err), false
	}
	types, used, err := withObservedMemory(cat, cfg, types, res.Status.AMIs, observed)
	if err != nil {
		return nil, fmt.Sprintf("EC2NodeClass %s: building instance types: %v", name, err), false
	}
	rc = &readyClass{nc: nc, resolved: res, subnets: subnets, types: types, byName: map[string]*scheduling.InstanceType{},
		memory: used, overhead: overhead}
	for _, it := range types {
		rc.byName[it.Name] = it
	}
	return rc, "", false
}

// readyMessage is the message of the resolution's Ready condition.
func readyMessage(res nodeclass.Resolution) string {
	for _, c := range res.Status.Conditions {
		if c.Type == nodeclass.ConditionTypeReady {
			return c.Message
		}
	}
	return "no Ready condition"
}

// subnetView is what a run's subnet choice starts from: the run's marks and the claims it read.
type subnetView struct {
	run    *runSubnets
	claims []state.Claim
}

// chooseSubnets gives the class its subnet choice over the run's view, and takes its offerings in a
// zone whose subnets are all marked out of the solve (Available false), as Karpenter's
// unavailable-offerings cache does with its subnet keys.
func (rc *readyClass) chooseSubnets(sv subnetView) {
	if sv.run == nil {
		return
	}
	rc.choice = newClassSubnets(rc.resolved, sv.claims, func(name string) int64 {
		if it := rc.byName[name]; it != nil {
			return it.Capacity.Pods
		}
		return 0
	}, sv.run)
	out := map[string]bool{}
	for _, z := range rc.choice.zones() {
		if rc.choice.zoneMarked(z) {
			out[z] = true
		}
	}
	if len(out) == 0 {
		return
	}
	for _, it := range rc.types {
		for i := range it.Offerings {
			if out[it.Offerings[i].Zone] {
				it.Offerings[i].Available = false
			}
		}
	}
}
