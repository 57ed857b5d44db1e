package apis

import (
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// This file lists the settings Karpenter has (marked new, alpha or feature-gated in its v1 API) whose
// behaviour Nodewright does not implement yet. They are decoded and validated like any other field, and
// then refused here, so that a manifest is never accepted with a setting silently ignored. Implementing one
// means deleting its check.

// NotSupportedYet is the start of every message refusing a setting Nodewright does not implement yet.
const NotSupportedYet = "not supported yet by nodewright"

func notSupportedYet(path *field.Path, what string) *field.Error {
	return field.Forbidden(path, NotSupportedYet+": "+what)
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
	return append(errs, windowsFields(s, spec)...)
}

// windowsAMIFamilies are the AMI families that give Windows nodes.
var windowsAMIFamilies = []string{AMIFamilyWindows2019, AMIFamilyWindows2022, AMIFamilyWindows2025}

// windowsNodes says why a Windows AMI family is refused: Nodewright writes Linux user data only, so every
// launch from such a class would fail.
func windowsNodes(what string) string {
	return "Windows nodes (" + what + "); use AL2023, AL2, Bottlerocket, or Custom with a Linux AMI"
}

// windowsFields refuses every field that makes a class launch Windows: amiFamily, and an alias whose
// family is Windows (with or without amiFamily: Custom).
func windowsFields(s *EC2NodeClassSpec, spec *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.AMIFamily != nil && slices.Contains(windowsAMIFamilies, *s.AMIFamily) {
		errs = append(errs, notSupportedYet(spec.Child("amiFamily"), windowsNodes(*s.AMIFamily)))
	}
	for i, term := range s.AMISelectorTerms {
		if alias, ok := ParseAlias(term.Alias); ok && slices.Contains(windowsAMIFamilies, alias.Family) {
			errs = append(errs, notSupportedYet(spec.Child("amiSelectorTerms").Index(i).Child("alias"), windowsNodes(term.Alias)))
		}
	}
	return errs
}
