package apis

import "k8s.io/apimachinery/pkg/util/validation/field"

// This file lists the settings Karpenter has (marked new, alpha or feature-gated in its v1 API) whose
// behaviour Nodewright does not implement yet. They are decoded and validated like any other field, and
// then refused here, so that a manifest is never accepted with a setting silently ignored. Implementing one
// means deleting its check.

// NotSupportedYet is the start of every message refusing a setting Nodewright does not implement yet.
const NotSupportedYet = "not supported yet by nodewright"

func notSupportedYet(path *field.Path, what string) *field.Error {
	return field.Forbidden(path, NotSupportedYet+": "+what)
}

func unsupportedNodePoolFields(np *NodePool) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if np.Spec.Replicas != nil {
		errs = append(errs, notSupportedYet(spec.Child("replicas"), "static NodePools (alpha in Karpenter, feature gate StaticCapacity)"))
	}
	if np.Spec.Disruption.ConsolidationPolicy == ConsolidationPolicyBalanced {
		errs = append(errs, notSupportedYet(spec.Child("disruption", "consolidationPolicy"), "the Balanced consolidation policy (new in Karpenter); use WhenEmpty or WhenEmptyOrUnderutilized"))
	}
	return errs
}

func unsupportedEC2NodeClassFields(nc *EC2NodeClass) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	s := &nc.Spec
	if s.PlacementGroupSelector != nil {
		errs = append(errs, notSupportedYet(spec.Child("placementGroupSelector"), "placement groups (new in Karpenter)"))
	}
	if s.IPPrefixCount != nil {
		errs = append(errs, notSupportedYet(spec.Child("ipPrefixCount"), "IPv4 prefix assignment (new in Karpenter)"))
	}
	if s.NetworkInterfaces != nil {
		errs = append(errs, notSupportedYet(spec.Child("networkInterfaces"), "custom network interfaces (new in Karpenter)"))
	}
	if s.ConnectionTracking != nil {
		errs = append(errs, notSupportedYet(spec.Child("connectionTracking"), "connection tracking timeouts (new in Karpenter)"))
	}
	if s.CPUOptions != nil {
		errs = append(errs, notSupportedYet(spec.Child("cpuOptions"), "CPU options such as nested virtualization (new in Karpenter)"))
	}
	return errs
}
