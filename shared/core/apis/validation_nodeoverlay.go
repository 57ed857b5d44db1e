package apis

import (
	"fmt"
	"regexp"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The rules of Karpenter's NodeOverlay CRD (karpenter.sh/v1alpha1) and of its runtime validation.
const (
	minOverlayWeight = 1
	maxOverlayWeight = 10000
)

var (
	// overlayPricePattern is an absolute price: a non-negative decimal.
	overlayPricePattern = regexp.MustCompile(`^\d+(\.\d+)?$`)
	// overlayAdjustmentPatterns are the forms of a price adjustment: a signed amount, a positive
	// percentage, or a negative percentage no lower than -100%.
	overlayAdjustmentPatterns = []*regexp.Regexp{
		regexp.MustCompile(`^[+-]\d*\.?\d+$`),
		regexp.MustCompile(`^\+\d*\.?\d+%$`),
		regexp.MustCompile(`^-\d{1,2}(\.\d+)?%$`),
		regexp.MustCompile(`^-100%$`),
	}
)

// overlayRestrictedResources are the resources an overlay's capacity may not set: it adds extended
// resources only.
var overlayRestrictedResources = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage, corev1.ResourcePods}

// ValidateNodeOverlay checks a NodeOverlay against Karpenter's CRD (requirements at most 100 with the
// NodePool operators, price and priceAdjustment patterns and their exclusion, capacity restricted to
// extended resources, weight 1–10000) and its runtime validation (requirement keys and values as a
// NodePool's, NotIn with values). Nodewright adds one rule: an extended resource is a whole,
// non-negative number, as Kubernetes requires of a node's extended resources. The errors name the field
// path.
func ValidateNodeOverlay(no *NodeOverlay) field.ErrorList {
	errs := validateObjectMeta(&no.ObjectMeta)
	spec := field.NewPath("spec")
	reqs := spec.Child("requirements")
	if len(no.Spec.Requirements) > maxRequirements {
		errs = append(errs, field.TooMany(reqs, len(no.Spec.Requirements), maxRequirements))
	}
	for i, r := range no.Spec.Requirements {
		path := reqs.Index(i)
		errs = append(errs, validateRequirement(NodeSelectorRequirementWithMinValues{Key: r.Key, Operator: r.Operator, Values: r.Values}, path)...)
		if r.Operator == corev1.NodeSelectorOpNotIn && len(r.Values) == 0 {
			errs = append(errs, field.Required(path.Child("values"), "requirements with operator 'NotIn' must have a value defined"))
		}
	}
	if no.Spec.Price != nil && no.Spec.PriceAdjustment != nil {
		errs = append(errs, field.Forbidden(spec.Child("priceAdjustment"), "cannot set both 'price' and 'priceAdjustment'"))
	}
	if p := no.Spec.Price; p != nil && !overlayPricePattern.MatchString(*p) {
		errs = append(errs, field.Invalid(spec.Child("price"), *p, "must be a non-negative decimal price, such as 0.42"))
	}
	if a := no.Spec.PriceAdjustment; a != nil && !validAdjustment(*a) {
		errs = append(errs, field.Invalid(spec.Child("priceAdjustment"), *a,
			"must be a signed amount (+0.5, -0.1) or a signed percentage (+10%, -15%) no lower than -100%"))
	}
	capacity := spec.Child("capacity")
	for _, name := range sortedKeys(resourceNames(no.Spec.Capacity)) {
		q := no.Spec.Capacity[corev1.ResourceName(name)]
		path := capacity.Key(name)
		if restrictedOverlayResource(corev1.ResourceName(name)) {
			errs = append(errs, field.Forbidden(path, fmt.Sprintf("invalid capacity: %s is restricted: an overlay adds extended resources only, not cpu, memory, ephemeral-storage or pods", name)))
			continue
		}
		if q.Sign() < 0 || q.MilliValue()%1000 != 0 {
			errs = append(errs, field.Invalid(path, q.String(), "an extended resource must be a whole number, 0 or more"))
		}
	}
	if w := no.Spec.Weight; w != nil && (*w < minOverlayWeight || *w > maxOverlayWeight) {
		errs = append(errs, field.Invalid(spec.Child("weight"), *w, fmt.Sprintf("must be between %d and %d, inclusive", minOverlayWeight, maxOverlayWeight)))
	}
	return errs
}

func validAdjustment(s string) bool {
	for _, re := range overlayAdjustmentPatterns {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

func restrictedOverlayResource(name corev1.ResourceName) bool {
	for _, r := range overlayRestrictedResources {
		if name == r {
			return true
		}
	}
	return false
}
