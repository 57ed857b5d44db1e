package apis

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/robfig/cron/v3"
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

const (
	maxBudgets           = 50
	maxBudgetReasons     = 50
	minWeight            = 1
	maxWeight            = 100
	limitsNodesKey       = corev1.ResourceName("nodes")
	timezoneNotSupported = "timezones are not supported; budget schedules are in UTC"
)

// nodePoolNameTooLong is why a NodePool name longer than MaxNodePoolNameLength is refused (see names.go).
var nodePoolNameTooLong = fmt.Sprintf("must be no more than %d characters: nodewright names each NodeClaim <nodepool>-<%d characters> "+
	"and launches it with that name and a launch-attempt suffix as EC2's CreateFleet client token, which is at most %d characters",
	MaxNodePoolNameLength, NodeClaimNameSuffixLength, MaxClientTokenLength)

var (
	budgetNodesPattern    = regexp.MustCompile(`^((100|[0-9]{1,2})%|[0-9]+)$`)
	budgetSchedulePattern = regexp.MustCompile(`^(@(annually|yearly|monthly|weekly|daily|midnight|hourly))|((.+)\s(.+)\s(.+)\s(.+)\s(.+))$`)

	// ConsolidationPolicies lists the values consolidationPolicy accepts.
	ConsolidationPolicies = []string{string(ConsolidationPolicyWhenEmpty), string(ConsolidationPolicyWhenEmptyOrUnderutilized), string(ConsolidationPolicyBalanced)}
	// DisruptionReasons lists the values a budget's reasons accept.
	DisruptionReasons = []string{string(DisruptionReasonUnderutilized), string(DisruptionReasonEmpty), string(DisruptionReasonDrifted)}
)

// ValidateNodePool checks a NodePool against every rule of Karpenter's CRD (patterns, enums, bounds, CEL
// rules) and of its runtime validation, and refuses settings Nodewright does not implement yet. Call it on
// a defaulted object (SetDefaults): unset defaulted fields are reported as required. The errors name the
// field path and read like kubectl's.
func ValidateNodePool(np *NodePool) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateObjectMeta(&np.ObjectMeta)...)
	if len(np.Name) > MaxNodePoolNameLength {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), np.Name, nodePoolNameTooLong))
	}
	spec := field.NewPath("spec")
	errs = append(errs, validateTemplate(&np.Spec.Template, spec.Child("template"))...)
	errs = append(errs, validateDisruption(&np.Spec.Disruption, spec.Child("disruption"))...)
	if w := np.Spec.Weight; w != nil && (*w < minWeight || *w > maxWeight) {
		errs = append(errs, field.Invalid(spec.Child("weight"), *w, fmt.Sprintf("must be between %d and %d, inclusive", minWeight, maxWeight)))
	}
	for _, name := range sortedKeys(resourceNames(np.Spec.Limits)) {
		if q := np.Spec.Limits[corev1.ResourceName(name)]; q.Sign() < 0 {
			errs = append(errs, field.Invalid(spec.Child("limits").Key(name), q.String(), "must be greater than or equal to 0"))
		}
	}
	if r := np.Spec.Replicas; r != nil {
		if *r < 0 {
			errs = append(errs, field.Invalid(spec.Child("replicas"), *r, "must be greater than or equal to 0"))
		}
		for name := range np.Spec.Limits {
			if name != limitsNodesKey {
				errs = append(errs, field.Forbidden(spec.Child("limits"), "only 'limits.nodes' is supported on static NodePools"))
				break
			}
		}
		if np.Spec.Weight != nil {
			errs = append(errs, field.Forbidden(spec.Child("weight"), "'weight' is not supported on static NodePools"))
		}
	}
	return errs
}

// validateObjectMeta applies the API server's checks for a cluster-scoped object, and requires a name:
// configuration is stored by name, so generateName cannot stand in for it.
func validateObjectMeta(meta *metav1.ObjectMeta) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(meta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	if meta.Name == "" && meta.GenerateName != "" {
		errs = append(errs, field.Required(field.NewPath("metadata", "name"), "generateName is not supported: configuration objects need a name"))
	}
	return errs
}

func validateTemplate(t *NodeClaimTemplate, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	meta := path.Child("metadata")
	errs = append(errs, ValidateTemplateLabels(t.ObjectMeta.Labels, meta.Child("labels"))...)
	errs = append(errs, apivalidation.ValidateAnnotations(t.ObjectMeta.Annotations, meta.Child("annotations"))...)
	spec := path.Child("spec")
	if t.Spec.Requirements == nil {
		errs = append(errs, field.Required(spec.Child("requirements"), ""))
	}
	errs = append(errs, ValidateRequirements(t.Spec.Requirements, spec.Child("requirements"))...)
	errs = append(errs, ValidateTaints(t.Spec.Taints, t.Spec.StartupTaints, spec)...)
	errs = append(errs, ValidateNodeClassRef(t.Spec.NodeClassRef, spec.Child("nodeClassRef"))...)
	errs = append(errs, validateNillableDuration(t.Spec.ExpireAfter, spec.Child("expireAfter"))...)
	if tgp := t.Spec.TerminationGracePeriod; tgp != nil {
		errs = append(errs, validateDuration(spec.Child("terminationGracePeriod"), string(*tgp), durationPattern)...)
	}
	return errs
}

func validateNillableDuration(d NillableDuration, path *field.Path) field.ErrorList {
	if d == "" {
		return field.ErrorList{field.Required(path, "")}
	}
	return validateDuration(path, string(d), nillableDurationPattern)
}

func validateDisruption(d *Disruption, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateNillableDuration(d.ConsolidateAfter, path.Child("consolidateAfter"))...)
	if d.ConsolidationPolicy == "" {
		errs = append(errs, field.Required(path.Child("consolidationPolicy"), ""))
	} else if !slices.Contains(ConsolidationPolicies, string(d.ConsolidationPolicy)) {
		errs = append(errs, field.NotSupported(path.Child("consolidationPolicy"), d.ConsolidationPolicy, ConsolidationPolicies))
	}
	budgets := path.Child("budgets")
	if len(d.Budgets) > maxBudgets {
		errs = append(errs, field.TooMany(budgets, len(d.Budgets), maxBudgets))
	}
	for i := range d.Budgets {
		errs = append(errs, validateBudget(&d.Budgets[i], budgets.Index(i))...)
	}
	return errs
}

func validateBudget(b *Budget, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if b.Nodes == "" {
		errs = append(errs, field.Required(path.Child("nodes"), ""))
	} else {
		errs = append(errs, validatePattern(path.Child("nodes"), b.Nodes, budgetNodesPattern)...)
	}
	if b.Schedule != nil {
		errs = append(errs, validateSchedule(*b.Schedule, path.Child("schedule"))...)
	}
	if b.Duration != nil {
		errs = append(errs, validateDuration(path.Child("duration"), string(*b.Duration), budgetDurationPattern)...)
	}
	switch {
	case b.Schedule != nil && b.Duration == nil:
		errs = append(errs, field.Required(path.Child("duration"), "'schedule' must be set with 'duration'"))
	case b.Schedule == nil && b.Duration != nil:
		errs = append(errs, field.Required(path.Child("schedule"), "'schedule' must be set with 'duration'"))
	}
	reasons := path.Child("reasons")
	if len(b.Reasons) > maxBudgetReasons {
		errs = append(errs, field.TooMany(reasons, len(b.Reasons), maxBudgetReasons))
	}
	seen := map[DisruptionReason]bool{}
	for i, r := range b.Reasons {
		if !slices.Contains(DisruptionReasons, string(r)) {
			errs = append(errs, field.NotSupported(reasons.Index(i), r, DisruptionReasons))
		}
		if seen[r] {
			errs = append(errs, field.Duplicate(reasons.Index(i), r))
		}
		seen[r] = true
	}
	return errs
}

// validateSchedule checks a budget schedule: the CRD's pattern, no time zone, and a cron expression the
// budget evaluator can parse (five fields or a @-descriptor, evaluated in UTC).
func validateSchedule(s string, path *field.Path) field.ErrorList {
	if errs := validatePattern(path, s, budgetSchedulePattern); len(errs) > 0 {
		return errs
	}
	if strings.Contains(s, "TZ=") {
		return field.ErrorList{field.Invalid(path, s, timezoneNotSupported)}
	}
	if _, err := ParseBudgetSchedule(s); err != nil {
		return field.ErrorList{field.Invalid(path, s, err.Error())}
	}
	return nil
}

// ParseBudgetSchedule parses a budget schedule as Karpenter evaluates it: standard cron, in UTC.
func ParseBudgetSchedule(s string) (cron.Schedule, error) {
	return cron.ParseStandard("TZ=UTC " + s)
}

func resourceNames(l corev1.ResourceList) map[string]bool {
	out := make(map[string]bool, len(l))
	for name := range l {
		out[string(name)] = true
	}
	return out
}
