package scheduling

import (
	"cmp"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// MinValuesPolicy says what happens when a claim's instance types cannot meet a requirement's minValues.
type MinValuesPolicy string

const (
	// MinValuesStrict leaves the pod unschedulable (Karpenter's default).
	MinValuesStrict MinValuesPolicy = "Strict"
	// MinValuesBestEffort lowers minValues to what is achievable and marks the claim relaxed.
	MinValuesBestEffort MinValuesPolicy = "BestEffort"
)

// NodePool is the scheduler's view of a Karpenter NodePool: what its nodes look like and how many it
// may launch. It is deliberately smaller than the API type so that the API can evolve independently.
type NodePool struct {
	Name   string
	Weight int32
	// Requirements constrain the nodes' labels (from spec.template.spec.requirements).
	Requirements []NodeSelectorRequirement
	// Labels are added to every node (spec.template.metadata.labels).
	Labels map[string]string
	// Annotations are put on every node (spec.template.metadata.annotations); the scheduler ignores them.
	Annotations map[string]string
	// Taints must be tolerated; StartupTaints need not be.
	Taints        []corev1.Taint
	StartupTaints []corev1.Taint
	// Limits cap the total capacity of the pool's nodes; the "nodes" key caps their number. Resources
	// not listed are unlimited.
	Limits corev1.ResourceList
	// InstanceTypes, when set, replaces Input.InstanceTypes for this pool (e.g. per EC2NodeClass
	// allocatable).
	InstanceTypes []*InstanceType
}

// orderNodePools sorts pools by weight, heaviest first; equal weights by name, Z to A, as Karpenter does.
func orderNodePools(pools []NodePool) []NodePool {
	out := slices.Clone(pools)
	slices.SortStableFunc(out, func(a, b NodePool) int {
		return cmp.Or(cmp.Compare(b.Weight, a.Weight), cmp.Compare(b.Name, a.Name))
	})
	return out
}

// nodePoolRequirements returns the requirements every node of the pool satisfies: its requirements,
// its labels, and the nodepool label.
func nodePoolRequirements(p NodePool) (Requirements, error) {
	reqs, err := RequirementsFromSpecs(p.Requirements)
	if err != nil {
		return nil, fmt.Errorf("nodepool %s requirements: %w", p.Name, err)
	}
	reqs.AddAll(RequirementsFromLabels(p.Labels))
	reqs.Add(&Requirement{Key: LabelNodePool, values: []string{p.Name}})
	return reqs, nil
}
