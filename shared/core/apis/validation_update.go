package apis

import (
	"reflect"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateNodePoolUpdate checks the rules Karpenter's CRD applies when a NodePool replaces an earlier
// version of itself (Nodewright replaces stored configuration on deploy and apply): nodeClassRef.group and
// nodeClassRef.kind are immutable, and a pool cannot switch between static (replicas set) and dynamic.
// Validate the new object with ValidateNodePool as well.
func ValidateNodePoolUpdate(old, updated *NodePool) field.ErrorList {
	var errs field.ErrorList
	ref := field.NewPath("spec", "template", "spec", "nodeClassRef")
	if o, n := old.Spec.Template.Spec.NodeClassRef, updated.Spec.Template.Spec.NodeClassRef; o != nil && n != nil {
		if o.Group != n.Group {
			errs = append(errs, field.Invalid(ref.Child("group"), n.Group, "nodeClassRef.group is immutable"))
		}
		if o.Kind != n.Kind {
			errs = append(errs, field.Invalid(ref.Child("kind"), n.Kind, "nodeClassRef.kind is immutable"))
		}
	}
	if old.IsStatic() != updated.IsStatic() {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "replicas"),
			"Cannot transition NodePool between static (replicas set) and dynamic (replicas unset) provisioning modes"))
	}
	return errs
}

// ValidateNodeClaimUpdate enforces that a NodeClaim's spec never changes once written.
func ValidateNodeClaimUpdate(old, updated *NodeClaim) field.ErrorList {
	if !reflect.DeepEqual(old.Spec, updated.Spec) {
		return field.ErrorList{field.Forbidden(field.NewPath("spec"), "spec is immutable")}
	}
	return nil
}
