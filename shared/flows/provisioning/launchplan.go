package provisioning

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/launchtemplate"
	"github.com/nodewright/nodewright/shared/adapters/nodeclass"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// LaunchTemplates makes sure a launch template exists; *launchtemplate.Provider satisfies it.
type LaunchTemplates interface {
	Ensure(ctx context.Context, t launchtemplate.Template) (string, error)
}

var _ LaunchTemplates = (*launchtemplate.Provider)(nil)

// claimTarget is everything a claim's launch plan is built from.
type claimTarget struct {
	claim       scheduling.ClaimPlan
	pool        scheduling.NodePool
	class       *readyClass
	unavailable scheduling.UnavailableOfferings
	cluster     launchtemplate.Cluster
	// launches is how many claims launch together with this plan (a batch); 0 means one.
	launches int
}

// buildLaunchPlan turns a planned claim into the overrides of its launch, per capacity type and cheapest
// first: every available offering of its instance-type options that its requirements allow (zone, zone
// id, capacity type) in a zone where the node class has an unmarked subnet (the one with most free
// addresses less those predicted taken, reserved for this launch until it settles: subnetchoice.go), through
// the launch template of the AMI that fits the instance type (its requirements: architecture at least)
// and of that capacity type. A reserved offering goes through a template of its own that targets its
// capacity reservation, if the node class still selects it and the requirements allow its id and type.
// An instance type no AMI fits is left out. Before any template is made, the offerings go through the
// filters Karpenter applies last before CreateFleet (see filterOfferings): exotic instance types only when
// nothing else is left, and no spot offering dearer than the cheapest on-demand one.
func buildLaunchPlan(ctx context.Context, templates LaunchTemplates, t claimTarget, req instance.Request) (LaunchPlan, error) {
	reqs, err := scheduling.RequirementsFromSpecs(t.claim.Requirements)
	if err != nil {
		return LaunchPlan{}, fmt.Errorf("claim requirements: %w", err)
	}
	imageFor, err := t.class.imageChooser()
	if err != nil {
		return LaunchPlan{}, err
	}
	hold := t.holdSubnets(reqs)
	offers := launchOfferings(t, reqs, imageFor, hold)
	offers, filtered := filterOfferings(offers, t.class.byName, reqs)
	plan := LaunchPlan{Request: req, Images: map[string]string{}, Filtered: filtered, subnets: hold}
	names := map[[4]string]string{} // (image, capacity type, reservation, EFA interfaces) → template
	for _, lo := range offers {
		key := [4]string{lo.image, lo.capacityType, lo.override.ReservationID, strconv.Itoa(int(lo.efa))}
		lt, ok := names[key]
		if !ok {
			opts := templateOptions(t, reqs, lo.capacityType, lo.reservation)
			opts.EFAInterfaces = lo.efa
			lt, err = templates.Ensure(ctx, launchtemplate.Template{NodeClass: t.class.nc, Resolved: t.class.resolved.Status,
				ImageID: lo.image, Options: opts})
			if err != nil {
				hold.settle(nil, nil, false)
				return LaunchPlan{}, fmt.Errorf("ensuring launch template for %s: %w", lo.image, err)
			}
			names[key] = lt
			plan.Images[lt] = lo.image
		}
		ov := lo.override
		ov.LaunchTemplate = lt
		switch lo.capacityType {
		case instance.CapacityTypeSpot:
			plan.Spot = append(plan.Spot, ov)
		case instance.CapacityTypeOnDemand:
			plan.OnDemand = append(plan.OnDemand, ov)
		default:
			plan.Reserved = append(plan.Reserved, ov)
		}
	}
	byPrice := func(a, b instance.Override) int {
		return cmp.Or(cmp.Compare(a.Price, b.Price), cmp.Compare(a.InstanceType, b.InstanceType), cmp.Compare(a.Zone, b.Zone))
	}
	slices.SortStableFunc(plan.Reserved, byPrice)
	slices.SortStableFunc(plan.Spot, byPrice)
	slices.SortStableFunc(plan.OnDemand, byPrice)
	return plan, nil
}

// launchOffering is one offering a launch may go through, before its launch template is made: the
// override (without template), its capacity type, the AMI and, for a reserved offering, its reservation.
type launchOffering struct {
	override     instance.Override
	capacityType string
	image        string
	reservation  *nodeclass.CapacityReservation
	// efa is the EFA interfaces its nodes launch with: the type's, when the claim's pods request EFA.
	efa int32
}

// launchOfferings lists the offerings of the claim's instance-type options a launch may take (see
// buildLaunchPlan), in option order.
func launchOfferings(t claimTarget, reqs scheduling.Requirements, imageFor func(string) (string, bool), hold *subnetHold) []launchOffering {
	reservations := map[string]nodeclass.CapacityReservation{}
	for _, cr := range t.class.resolved.CapacityReservations {
		reservations[cr.ID] = cr
	}
	var out []launchOffering
	wantsEFA := t.claim.Requests.Extended[scheduling.ResourceEFA] > 0
	typeOf := t.poolTypes()
	for _, name := range t.claim.InstanceTypeOptions {
		image, ok := imageFor(name)
		if !ok || image == "" {
			continue
		}
		it := typeOf(name)
		for _, o := range it.Offerings {
			subnet, ok := t.class.subnets[o.Zone]
			if t.class.choice != nil {
				subnet, ok = hold.subnet(o.Zone)
			}
			if !ok || !o.Available || t.unavailable.Blocks(it.Name, &o) {
				continue
			}
			if z := reqs.Get(scheduling.LabelZone); z != nil && !z.Has(o.Zone) {
				continue
			}
			if c := reqs.Get(scheduling.LabelCapacityType); c != nil && !c.Has(o.CapacityType) {
				continue
			}
			if !zoneIDAllowed(reqs, subnet.ZoneID, o.ZoneID) {
				continue
			}
			lo := launchOffering{capacityType: o.CapacityType, image: image,
				override: instance.Override{InstanceType: it.Name, Zone: o.Zone, SubnetID: subnet.ID, Price: o.Price}}
			switch o.CapacityType {
			case instance.CapacityTypeSpot, instance.CapacityTypeOnDemand:
				if !scheduling.ReservationLabelsAllow(&o, reqs) {
					continue // the claim requires a reservation label, which spot and on-demand nodes lack
				}
			case instance.CapacityTypeReserved:
				r, ok := reservations[o.ReservationID]
				if !ok || r.InstanceType != it.Name || r.AvailabilityZone != o.Zone {
					continue // an offering of a reservation the class no longer selects
				}
				if rid := reqs.Get(scheduling.LabelCapacityReservationID); rid != nil && !rid.Has(r.ID) {
					continue
				}
				if rt := reqs.Get(scheduling.LabelCapacityReservationType); rt != nil && !rt.Has(r.ReservationType) {
					continue
				}
				if ri := reqs.Get(scheduling.LabelCapacityReservationInterrupt); ri != nil && !ri.Has(strconv.FormatBool(r.Interruptible)) {
					continue
				}
				lo.reservation = &r
				lo.override.ReservationID, lo.override.ReservationType = r.ID, r.ReservationType
				lo.override.Interruptible = r.Interruptible
			default:
				continue
			}
			// Pods that request EFA need the instance's EFA interfaces attached at launch: the types of one
			// claim can have different counts, so each count gets its own template (as Karpenter does).
			if wantsEFA {
				lo.efa = int32(min(it.Capacity.Extended[scheduling.ResourceEFA], math.MaxInt32))
			}
			out = append(out, lo)
		}
	}
	return out
}

// holdSubnets picks the launch's subnet in each zone its requirements allow and reserves there the
// addresses it is predicted to take: for each claim launched together, the fewest pods of its instance
// types with an available offering in the zone (as Karpenter predicts). Nil for a class without a
// subnet choice.
func (t claimTarget) holdSubnets(reqs scheduling.Requirements) *subnetHold {
	cs := t.class.choice
	if cs == nil {
		return nil
	}
	var zones []string
	zr := reqs.Get(scheduling.LabelZone)
	for _, z := range cs.zones() {
		if zr == nil || zr.Has(z) {
			zones = append(zones, z)
		}
	}
	launches := int64(max(t.launches, 1))
	return cs.hold(zones, func(zone string) int64 {
		fewest := int64(-1)
		for _, name := range t.claim.InstanceTypeOptions {
			it := t.class.byName[name]
			if it == nil {
				continue
			}
			for _, o := range it.Offerings {
				if o.Zone == zone && o.Available && (fewest < 0 || it.Capacity.Pods < fewest) {
					fewest = it.Capacity.Pods
				}
			}
		}
		return launches * max(fewest, 0)
	})
}

// poolTypes looks instance types up as the claim's NodePool sees them: with its NodeOverlays applied
// (prepareClasses), so a launch's overrides carry the overlay's prices. A type the pool does not list
// (a target built without the pool's types) is the node class's.
func (t claimTarget) poolTypes() func(name string) *scheduling.InstanceType {
	pt, ct := t.pool.InstanceTypes, t.class.types
	if len(pt) == 0 || (len(pt) == len(ct) && &pt[0] == &ct[0]) {
		// No overlay changed the pool's types: they are the class's, indexed already.
		return func(name string) *scheduling.InstanceType { return t.class.byName[name] }
	}
	byName := make(map[string]*scheduling.InstanceType, len(t.pool.InstanceTypes))
	for _, it := range t.pool.InstanceTypes {
		byName[it.Name] = it
	}
	return func(name string) *scheduling.InstanceType {
		if it, ok := byName[name]; ok {
			return it
		}
		return t.class.byName[name]
	}
}

// zoneIDAllowed reports whether the claim's requirements allow the zone id of an override: the id of its
// subnet's zone, else the offering's. An override whose zone id is unknown on both sides is allowed,
// as before zone ids were known (a catalog or subnet status without them).
func zoneIDAllowed(reqs scheduling.Requirements, subnetZoneID, offeringZoneID string) bool {
	r, ok := reqs[scheduling.LabelZoneID]
	if !ok {
		return true
	}
	id := cmp.Or(subnetZoneID, offeringZoneID)
	return id == "" || r.Has(id)
}

// templateOptions are the user-data inputs of the claim's nodes: the NodePool's labels (its
// EC2NodeClass label included) with the nodepool and capacity-type labels, the custom labels the
// claim's pods narrowed (team=a from "team Exists"; see narrowedLabels), and its taints. A node of a
// reservation (cr, else nil) also gets the reservation id, type and interruptible labels, and its
// template targets it.
//
// Narrowed labels make templates differ per claim, but a template is named after the hash of its data,
// so claims with the same label set share one and a claim with another set gets its own. Only keys no
// instance type defines are narrowed into the template: well-known ones (instance-family, zone...)
// would differ between the overrides of one fleet, and reach the Node through registration instead.
func templateOptions(t claimTarget, reqs scheduling.Requirements, capacityType string, cr *nodeclass.CapacityReservation) launchtemplate.Options {
	labels := map[string]string{}
	for k, v := range narrowedLabels(reqs) {
		if !scheduling.IsWellKnownLabel(k) {
			labels[k] = v
		}
	}
	maps.Copy(labels, t.pool.Labels)
	labels[apis.NodePoolLabelKey] = t.pool.Name
	labels[apis.NodeClassLabelKey] = t.class.nc.Name
	labels[apis.CapacityTypeLabelKey] = capacityType
	opts := launchtemplate.Options{Cluster: t.cluster, Labels: labels, Taints: t.pool.Taints, StartupTaints: t.pool.StartupTaints}
	if cr != nil {
		labels[apis.LabelCapacityReservationID] = cr.ID
		labels[apis.LabelCapacityReservationType] = cr.ReservationType
		labels[apis.LabelCapacityReservationInterruptible] = strconv.FormatBool(cr.Interruptible)
		opts.CapacityReservationID, opts.CapacityReservationType = cr.ID, cr.ReservationType
		opts.CapacityReservationInterruptible = cr.Interruptible
	}
	return opts
}

// securityGroupIDs are the ids of the resolved security groups, which every launch template of the
// node class carries.
func securityGroupIDs(status apis.EC2NodeClassStatus) []string {
	ids := make([]string, 0, len(status.SecurityGroups))
	for _, sg := range status.SecurityGroups {
		ids = append(ids, sg.ID)
	}
	return ids
}

// imageChooser is the AMI choice of rc's launches, which drift compares a node's AMI with too (see
// Launches.Drift), so the two never disagree: for an instance type of rc's catalog, the AMI its launch
// goes through, "" when no resolved AMI fits it; ok is false for an instance type not in the catalog.
func (rc *readyClass) imageChooser() (func(instanceType string) (image string, ok bool), error) {
	amis, err := amiRequirements(rc.resolved.Status.AMIs)
	if err != nil {
		return nil, err
	}
	return func(name string) (string, bool) {
		it := rc.byName[name]
		if it == nil {
			return "", false
		}
		return pickAMI(amis, it), true
	}, nil
}

// amiChoice is a resolved AMI with its requirements parsed.
type amiChoice struct {
	id   string
	reqs scheduling.Requirements
}

// amiRequirements parses the AMIs' requirements, leaving deprecated AMIs out unless every AMI is
// deprecated (as Karpenter does).
func amiRequirements(amis []apis.AMIStatus) ([]amiChoice, error) {
	allDeprecated := !slices.ContainsFunc(amis, func(a apis.AMIStatus) bool { return !a.Deprecated })
	out := make([]amiChoice, 0, len(amis))
	for _, a := range amis {
		if a.Deprecated && !allDeprecated {
			continue
		}
		reqs, err := scheduling.RequirementsFromNodeSelector(corev1.NodeSelectorTerm{MatchExpressions: a.Requirements})
		if err != nil {
			return nil, fmt.Errorf("requirements of AMI %s: %w", a.ID, err)
		}
		out = append(out, amiChoice{id: a.ID, reqs: reqs})
	}
	return out, nil
}

// pickAMI returns the first AMI (the resolver lists the newest per requirement set first) whose
// requirements the instance type meets, or "".
func pickAMI(amis []amiChoice, it *scheduling.InstanceType) string {
	for _, a := range amis {
		if amiFits(it.Requirements, a.reqs) {
			return a.id
		}
	}
	return ""
}

// amiFits reports whether an instance type meets an AMI's requirements, strictly, as Karpenter maps AMIs
// to instance types: a label the type does not carry meets only DoesNotExist and NotIn. So the NVIDIA
// variant (instance-gpu-count Exists) never serves a Neuron type, nor the Neuron variant
// (instance-accelerator-count Exists) a GPU one.
func amiFits(it, ami scheduling.Requirements) bool {
	for key, r := range ami {
		if it.Has(key) {
			continue
		}
		if op := r.Operator(); op != scheduling.OpDoesNotExist && op != scheduling.OpNotIn {
			return false
		}
	}
	return it.Intersects(ami) == nil
}
