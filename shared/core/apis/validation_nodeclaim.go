package apis

import "k8s.io/apimachinery/pkg/util/validation/field"

// ValidateNodeClaim checks a NodeClaim record with the rules its spec shares with NodePool templates:
// requirements, taints, node class reference and durations. Call it on a defaulted claim.
func ValidateNodeClaim(c *NodeClaim) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if c.Spec.Requirements == nil {
		errs = append(errs, field.Required(spec.Child("requirements"), ""))
	}
	errs = append(errs, ValidateRequirements(c.Spec.Requirements, spec.Child("requirements"))...)
	errs = append(errs, ValidateTaints(c.Spec.Taints, c.Spec.StartupTaints, spec)...)
	errs = append(errs, ValidateNodeClassRef(c.Spec.NodeClassRef, spec.Child("nodeClassRef"))...)
	errs = append(errs, validateNillableDuration(c.Spec.ExpireAfter, spec.Child("expireAfter"))...)
	if tgp := c.Spec.TerminationGracePeriod; tgp != nil {
		errs = append(errs, validateDuration(spec.Child("terminationGracePeriod"), string(*tgp), durationPattern)...)
	}
	return errs
}
