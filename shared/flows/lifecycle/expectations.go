package lifecycle

import (
	"maps"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// ExpectedFor is what the claim's NodePool (pool; the zero pool when it is no longer configured) asks of
// its Node: every label recorded on the claim (its pool's template labels, the requirement values its
// pods narrowed, its instance type's labels), for claims recorded without them the pool's template
// labels and single-valued In requirements, the NodePool and EC2NodeClass labels, the instance type,
// zone and capacity type the claim launched with, the pool's template annotations (and, for a claim that
// recorded it, karpenter.sh/nodeclaim-min-values-relaxed, as Karpenter annotates every NodeClaim and its
// Node; and karpenter.sh/price-overlay-applied and karpenter.sh/capacity-overlay-applied "true" for a
// claim a NodeOverlay priced or gave capacity), taints and startup taints, and the extended resources (not cpu, memory, pods,
// ephemeral-storage or hugepages) the claim's pods requested.
func ExpectedFor(c state.Claim, pool scheduling.NodePool) Expected {
	exp := Expected{ProviderID: c.NodeProviderID(), Labels: map[string]string{}, Annotations: maps.Clone(pool.Annotations),
		Taints: pool.Taints, StartupTaints: pool.StartupTaints}
	for _, r := range pool.Requirements {
		if r.Operator == scheduling.OpIn && len(r.Values) == 1 && r.Key != scheduling.LabelHostname {
			exp.Labels[r.Key] = r.Values[0]
		}
	}
	maps.Copy(exp.Labels, pool.Labels)
	maps.Copy(exp.Labels, c.Labels)
	if c.MinValuesRelaxed != nil {
		if exp.Annotations == nil {
			exp.Annotations = map[string]string{}
		}
		exp.Annotations[apis.NodeClaimMinValuesRelaxedAnnotationKey] = strconv.FormatBool(*c.MinValuesRelaxed)
	}
	for key, applied := range map[string]bool{apis.PriceOverlayAppliedAnnotationKey: c.PriceOverlayApplied,
		apis.CapacityOverlayAppliedAnnotationKey: c.CapacityOverlayApplied} {
		if !applied {
			continue
		}
		if exp.Annotations == nil {
			exp.Annotations = map[string]string{}
		}
		exp.Annotations[key] = "true"
	}
	set := func(k, v string) {
		if v != "" {
			exp.Labels[k] = v
		}
	}
	set(scheduling.LabelNodePool, c.NodePool)
	set(scheduling.LabelEC2NodeClass, c.NodeClass)
	set(scheduling.LabelInstanceType, c.InstanceType)
	set(scheduling.LabelZone, c.Zone)
	set(scheduling.LabelCapacityType, c.CapacityType)
	for name, amount := range c.Requests {
		if !extended(name) {
			continue
		}
		if q, err := resource.ParseQuantity(amount); err == nil && !q.IsZero() {
			exp.ExtendedResources = append(exp.ExtendedResources, corev1.ResourceName(name))
		}
	}
	return exp
}

// extended reports whether a resource is an extended resource (a device plugin's, say).
func extended(name string) bool {
	switch corev1.ResourceName(name) {
	case corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods, corev1.ResourceEphemeralStorage:
		return false
	}
	return !strings.HasPrefix(name, corev1.ResourceHugePagesPrefix) && strings.Contains(name, "/")
}
