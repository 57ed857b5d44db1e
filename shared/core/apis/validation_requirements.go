package apis

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// This file holds the rules NodePool templates and NodeClaims share: requirements, taints, template labels
// and the node class reference.

const (
	maxRequirements       = 100
	maxRequirementKeyLen  = 316
	maxMinValues          = 50
	maxTemplateLabels     = 100
	numericOperatorsError = "requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value"
)

// TaintEffects lists the effects a taint may have.
var TaintEffects = []string{string(corev1.TaintEffectNoSchedule), string(corev1.TaintEffectPreferNoSchedule), string(corev1.TaintEffectNoExecute)}

// ValidateRequirements checks requirements (the list at path) as Karpenter's CRD and runtime validation do.
func ValidateRequirements(reqs []NodeSelectorRequirementWithMinValues, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(reqs) > maxRequirements {
		errs = append(errs, field.TooMany(path, len(reqs), maxRequirements))
	}
	for i, r := range reqs {
		errs = append(errs, validateRequirement(r, path.Index(i))...)
	}
	return errs
}

func validateRequirement(r NodeSelectorRequirementWithMinValues, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	keyPath, valuesPath := path.Child("key"), path.Child("values")
	switch {
	case r.Key == "":
		errs = append(errs, field.Required(keyPath, ""))
	case len(r.Key) > maxRequirementKeyLen:
		errs = append(errs, field.TooLong(keyPath, r.Key, maxRequirementKeyLen))
	default:
		for _, msg := range validation.IsQualifiedName(r.Key) {
			errs = append(errs, field.Invalid(keyPath, r.Key, msg))
		}
		if reason := RestrictedLabelReason(r.Key); reason != "" {
			errs = append(errs, field.Invalid(keyPath, r.Key, reason))
		}
	}
	for j, v := range r.Values {
		for _, msg := range validation.IsValidLabelValue(v) {
			errs = append(errs, field.Invalid(valuesPath.Index(j), v, msg))
		}
	}
	switch r.Operator {
	case "":
		errs = append(errs, field.Required(path.Child("operator"), ""))
	case corev1.NodeSelectorOpIn:
		if len(r.Values) == 0 {
			errs = append(errs, field.Required(valuesPath, "requirements with operator 'In' must have a value defined"))
		}
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt, NodeSelectorOpGte, NodeSelectorOpLte:
		if len(r.Values) != 1 {
			errs = append(errs, field.Invalid(valuesPath, r.Values, numericOperatorsError))
		} else if n, err := strconv.ParseInt(r.Values[0], 10, 64); err != nil || n < 0 {
			errs = append(errs, field.Invalid(valuesPath.Index(0), r.Values[0], numericOperatorsError))
		}
	case corev1.NodeSelectorOpNotIn, corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
	default:
		errs = append(errs, field.NotSupported(path.Child("operator"), r.Operator, SupportedOperators))
	}
	if r.MinValues != nil {
		mv := *r.MinValues
		switch {
		case mv < 1 || mv > maxMinValues:
			errs = append(errs, field.Invalid(path.Child("minValues"), mv, fmt.Sprintf("must be between 1 and %d, inclusive", maxMinValues)))
		case r.Operator == corev1.NodeSelectorOpIn && len(r.Values) < mv:
			errs = append(errs, field.Invalid(path.Child("minValues"), mv, "requirements with 'minValues' must have at least that many values specified in the 'values' field"))
		}
	}
	errs = append(errs, validateWellKnownValues(r, valuesPath)...)
	errs = append(errs, validateTenancy(r, path)...)
	return errs
}

// TenancyDefault is the only instance tenancy Nodewright launches: shared hardware.
const TenancyDefault = "default"

// tenancyUnsupported says why a tenancy other than default is refused.
const tenancyUnsupported = "Nodewright launches shared-tenancy instances only; dedicated tenancy is not supported, so " +
	LabelInstanceTenancy + " must allow \"" + TenancyDefault + "\""

// validateTenancy refuses a tenancy requirement that shared tenancy cannot meet. Nodewright launches
// shared-tenancy instances only (its launch templates set no tenancy and its prices are shared-tenancy
// prices), so a requirement for dedicated instances would be met by a shared instance labelled dedicated;
// it is refused instead. A requirement that allows default as well is met by default.
func validateTenancy(r NodeSelectorRequirementWithMinValues, path *field.Path) field.ErrorList {
	if r.Key != LabelInstanceTenancy {
		return nil
	}
	switch {
	case r.Operator == corev1.NodeSelectorOpIn && len(r.Values) > 0 && !slices.Contains(r.Values, TenancyDefault),
		r.Operator == corev1.NodeSelectorOpNotIn && slices.Contains(r.Values, TenancyDefault):
		return field.ErrorList{field.Invalid(path.Child("values"), r.Values, tenancyUnsupported)}
	case r.Operator == corev1.NodeSelectorOpDoesNotExist:
		return field.ErrorList{field.Invalid(path.Child("operator"), r.Operator, tenancyUnsupported)}
	}
	return nil
}

// validateWellKnownValues requires an In requirement on a label with a closed set of values (capacity type,
// tenancy) to name at least one, and at least minValues, of them.
func validateWellKnownValues(r NodeSelectorRequirementWithMinValues, path *field.Path) field.ErrorList {
	known, ok := WellKnownValues[r.Key]
	if !ok || r.Operator != corev1.NodeSelectorOpIn || len(r.Values) == 0 {
		return nil
	}
	valid := 0
	for _, v := range r.Values {
		if known[v] {
			valid++
		}
	}
	want := sortedKeys(known)
	if valid == 0 {
		return field.ErrorList{field.Invalid(path, r.Values, fmt.Sprintf("no valid values for %s: supported values: %s", r.Key, quoteJoin(want)))}
	}
	if r.MinValues != nil && valid < *r.MinValues {
		return field.ErrorList{field.Invalid(path, r.Values, fmt.Sprintf("minValues is %d but only %d values are valid for %s (supported values: %s)", *r.MinValues, valid, r.Key, quoteJoin(want)))}
	}
	return nil
}

// ValidateTaints checks taints and startup taints (the fields taints and startupTaints under path): keys and
// values are qualified names, effects are known, and no key/effect pair appears twice across both lists.
func ValidateTaints(taints, startupTaints []corev1.Taint, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	check := func(list []corev1.Taint, p *field.Path) {
		for i, t := range list {
			tp := p.Index(i)
			if t.Key == "" {
				errs = append(errs, field.Required(tp.Child("key"), ""))
			}
			for _, msg := range validation.IsQualifiedName(t.Key) {
				if t.Key != "" {
					errs = append(errs, field.Invalid(tp.Child("key"), t.Key, msg))
				}
			}
			if t.Value != "" {
				for _, msg := range validation.IsQualifiedName(t.Value) {
					errs = append(errs, field.Invalid(tp.Child("value"), t.Value, msg))
				}
			}
			if t.Effect == "" {
				errs = append(errs, field.Required(tp.Child("effect"), ""))
			} else if !slices.Contains(TaintEffects, string(t.Effect)) {
				errs = append(errs, field.NotSupported(tp.Child("effect"), t.Effect, TaintEffects))
			}
			pair := t.Key + "\x00" + string(t.Effect)
			if seen[pair] {
				errs = append(errs, field.Duplicate(tp, t.Key+":"+string(t.Effect)))
			}
			seen[pair] = true
		}
	}
	check(taints, path.Child("taints"))
	check(startupTaints, path.Child("startupTaints"))
	return errs
}

// ValidateTemplateLabels checks the labels copied to every node: at most 100, qualified keys and valid
// values, and none in a domain Karpenter reserves unless well known.
func ValidateTemplateLabels(labels map[string]string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(labels) > maxTemplateLabels {
		errs = append(errs, field.TooMany(path, len(labels), maxTemplateLabels))
	}
	for _, k := range sortedKeys(labels) {
		v := labels[k]
		for _, msg := range validation.IsQualifiedName(k) {
			errs = append(errs, field.Invalid(path, k, msg))
		}
		if reason := RestrictedLabelReason(k); reason != "" {
			errs = append(errs, field.Invalid(path, k, reason))
		}
		for _, msg := range validation.IsValidLabelValue(v) {
			errs = append(errs, field.Invalid(path.Key(k), v, msg))
		}
		if k == LabelInstanceTenancy && v != TenancyDefault {
			errs = append(errs, field.Invalid(path.Key(k), v, tenancyUnsupported))
		}
	}
	return errs
}

// ValidateNodeClassRef checks a node class reference: group, kind and name are required, the group has no
// "/", and — Nodewright being AWS-only — it must name a karpenter.k8s.aws EC2NodeClass.
func ValidateNodeClassRef(ref *NodeClassReference, path *field.Path) field.ErrorList {
	if ref == nil {
		return field.ErrorList{field.Required(path, "")}
	}
	var errs field.ErrorList
	switch {
	case ref.Group == "":
		errs = append(errs, field.Required(path.Child("group"), "group may not be empty"))
	case strings.Contains(ref.Group, "/"):
		errs = append(errs, field.Invalid(path.Child("group"), ref.Group, "should match '^[^/]*$'"))
	case ref.Group != AWSGroup:
		errs = append(errs, field.NotSupported(path.Child("group"), ref.Group, []string{AWSGroup}))
	}
	switch ref.Kind {
	case "":
		errs = append(errs, field.Required(path.Child("kind"), "kind may not be empty"))
	case KindEC2NodeClass:
	default:
		errs = append(errs, field.NotSupported(path.Child("kind"), ref.Kind, []string{KindEC2NodeClass}))
	}
	if ref.Name == "" {
		errs = append(errs, field.Required(path.Child("name"), "name may not be empty"))
	}
	return errs
}

// validatePattern reports value at path unless it matches re, in the words the API server uses.
func validatePattern(path *field.Path, value string, re *regexp.Regexp) field.ErrorList {
	if re.MatchString(value) {
		return nil
	}
	return field.ErrorList{field.Invalid(path, value, fmt.Sprintf("should match '%s'", re.String()))}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func quoteJoin(values []string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = strconv.Quote(v)
	}
	return strings.Join(q, ", ")
}
