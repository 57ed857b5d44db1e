package provisioning

import (
	"fmt"
	"maps"
	"strconv"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// claimLabels are the labels a planned claim's Node carries whatever instance type the launch picks, as
// Karpenter labels a new NodeClaim: the NodePool's template labels, the nodepool and node-class labels,
// and the requirement values the claim's pods narrowed (see narrowedLabels).
func claimLabels(pool scheduling.NodePool, nodeClass string, specs []scheduling.NodeSelectorRequirement) (map[string]string, error) {
	reqs, err := scheduling.RequirementsFromSpecs(specs)
	if err != nil {
		return nil, fmt.Errorf("claim requirements: %w", err)
	}
	labels := narrowedLabels(reqs)
	maps.Copy(labels, pool.Labels)
	labels[scheduling.LabelNodePool] = pool.Name
	if nodeClass != "" {
		labels[scheduling.LabelEC2NodeClass] = nodeClass
	}
	return labels, nil
}

// narrowedLabels are the claim requirements with a single allowed value: a pool's "team Exists" or
// "team In [a,b]" and a pod's nodeSelector team=a give team=a. kubernetes.io/hostname and the
// karpenter.sh keys pods may not select on are left out.
func narrowedLabels(reqs scheduling.Requirements) map[string]string {
	labels := map[string]string{}
	for k, v := range reqs.Labels() {
		if k != scheduling.LabelHostname && !scheduling.IsRestrictedLabel(k) {
			labels[k] = v
		}
	}
	return labels
}

// launchedLabels completes a claim's labels once its launch has answered: the launched instance type's
// labels (instance-category, -family, -generation, -size, -cpu, -memory, -hypervisor, arch...) under the
// claim's own (user labels win, as in Karpenter), then what the launch settled: instance type, zone,
// zone id, capacity type, and for a reserved launch the capacity reservation, its type and whether it
// is interruptible ("true"/"false", as Karpenter labels every reserved NodeClaim). it is nil when the
// instance type is not in the class's catalog; zoneID and reservationType are "" when unknown.
func launchedLabels(claim map[string]string, it *scheduling.InstanceType, inst instance.Instance,
	capacityType, zoneID, reservationType string) map[string]string {
	labels := map[string]string{}
	if it != nil {
		maps.Copy(labels, it.Requirements.Labels())
	}
	maps.Copy(labels, claim)
	set := func(k, v string) {
		if v != "" {
			labels[k] = v
		}
	}
	set(scheduling.LabelInstanceType, inst.InstanceType)
	set(scheduling.LabelZone, inst.Zone)
	set(scheduling.LabelZoneID, zoneID)
	set(scheduling.LabelCapacityType, capacityType)
	set(scheduling.LabelCapacityReservationID, inst.CapacityReservationID)
	if inst.CapacityReservationID != "" {
		set(scheduling.LabelCapacityReservationType, reservationType)
		set(scheduling.LabelCapacityReservationInterrupt, strconv.FormatBool(inst.InterruptibleReservation))
	}
	return labels
}
