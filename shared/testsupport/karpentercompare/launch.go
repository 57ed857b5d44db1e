package main

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	provsched "sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling"
	karpsched "sigs.k8s.io/karpenter/pkg/scheduling"
	"sigs.k8s.io/karpenter/pkg/utils/resources"
)

// capacityTypePrecedence is the order in which a launch considers capacity types: reserved capacity
// first, then spot, then on-demand. Nodewright prices its claims by the same rule.
var capacityTypePrecedence = []karpsched.Requirements{
	cloudprovider.ReservedRequirement, cloudprovider.SpotRequirement, cloudprovider.OnDemandRequirement,
}

// launchOffering is the offering a launch of the NodeClaim would take: among its instance-type
// options whose allocatable fits the claim's pod requests, the available offerings compatible with
// its requirements; of those, the first capacity type by precedence, and within it the cheapest.
func launchOffering(nc *provsched.NodeClaim) (*cloudprovider.Offering, error) {
	_, o, err := launchChoice(nc, resources.RequestsForPods(nc.Pods...))
	return o, err
}

// launchChoice is launchOffering for given requests (a disruption replacement's include its
// DaemonSet overhead), with the instance type the offering belongs to.
func launchChoice(nc *provsched.NodeClaim, requests corev1.ResourceList) (*cloudprovider.InstanceType, *cloudprovider.Offering, error) {
	var fitting []*cloudprovider.InstanceType
	for _, it := range nc.InstanceTypeOptions {
		if resources.Fits(requests, it.Allocatable()) {
			fitting = append(fitting, it)
		}
	}
	for _, ct := range capacityTypePrecedence {
		var best *cloudprovider.Offering
		var bestType *cloudprovider.InstanceType
		for _, it := range fitting {
			for _, o := range it.Offerings.Available().Compatible(nc.Requirements).Compatible(ct) {
				if best == nil || o.Price < best.Price {
					best, bestType = o, it
				}
			}
		}
		if best != nil {
			return bestType, best, nil
		}
	}
	return nil, nil, fmt.Errorf("karpenter NodeClaim with %d pods and %d instance-type options: no available offering fits its requests %s",
		len(nc.Pods), len(nc.InstanceTypeOptions), resources.String(requests))
}
