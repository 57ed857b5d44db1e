package mirror

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
)

// Reasons of the NodePool mirror's conditions (Karpenter's, where it has one).
const (
	ReasonNodePoolValidationFailed  = "NodePoolValidationFailed"
	ReasonNodeClassNotFound         = "NodeClassNotFound"
	ReasonNodeClassReadinessUnknown = "NodeClassReadinessUnknown"
	ReasonRegistrationFailed        = "RegistrationFailed"
	// ReasonAwaitingRegistration: no node of the pool's current template and class has registered or
	// timed out yet (Karpenter leaves NodeRegistrationHealthy Unknown then too).
	ReasonAwaitingRegistration = "AwaitingRegistration"
)

// RegistrationTimeoutReason is the disruption reason the lifecycle gives a claim whose Node did not
// register in time (reconcile's registration_timeout): a failed registration for NodeRegistrationHealthy.
const RegistrationTimeoutReason = "registration_timeout"

// Karpenter's NodeRegistrationHealthy tracker: the last registrationWindow outcomes of a pool, unhealthy
// when at least half of the window are failures.
const (
	registrationWindow   = 4
	registrationFailures = registrationWindow / 2
)

// Pool is what the NodePool mirror of one configured NodePool is built from.
type Pool struct {
	// NodePool is the NodePool as stored in the configuration.
	NodePool *apis.NodePool
	// Invalid is why the scheduler cannot use it (empty: it can).
	Invalid string
	// TemplateHash and ClassHash are the drift hashes of its template and EC2NodeClass as configured now;
	// only outcomes of claims launched with both count for NodeRegistrationHealthy (Karpenter resets the
	// condition when the NodePool or its class changes).
	TemplateHash, ClassHash string
	// Class is the Ready condition of its EC2NodeClass's mirror; nil when the class is not configured.
	Class *metav1.Condition
	// Claims are its live claims (state.Deleted left out) with their capacity.
	Claims []PoolClaim
}

// PoolClaim is one live claim of a pool and what it adds to the pool's status.resources.
type PoolClaim struct {
	Claim state.Claim
	// Capacity is the claim's Node's capacity, else its instance type's; nil while neither is known (a
	// claim not launched yet counts for nothing, as in Karpenter).
	Capacity corev1.ResourceList
}

// NodePoolStatus is the status of the NodePool mirror, in Karpenter's NodePool shape (nodes is always
// written, 0 included, as Karpenter's default makes it).
type NodePoolStatus struct {
	Resources  corev1.ResourceList `json:"resources,omitempty"`
	Nodes      int64               `json:"nodes"`
	Conditions []metav1.Condition  `json:"conditions,omitempty"`
}

// NodePool builds the NodePool mirror of one pool: its spec as configured (nodeClassRef naming the
// EC2NodeClass mirror of nodewright.sh), status.resources and status.nodes summed over its live claims
// that are not being disrupted (cpu, memory, pods, ephemeral-storage and nodes always present), and
// Karpenter's conditions ValidationSucceeded, NodeClassReady, NodeRegistrationHealthy and Ready (=
// ValidationSucceeded ∧ NodeClassReady). Conditions are dated now; the caller keeps earlier dates of
// unchanged conditions (KeepTransitionTimes).
func NodePool(in Pool, now time.Time) Object {
	np := in.NodePool
	spec := np.Spec
	class := ""
	if ref := spec.Template.Spec.NodeClassRef; ref != nil {
		class = ref.Name
	}
	spec.Template.Spec.NodeClassRef = &apis.NodeClassReference{Group: Group, Kind: EC2NodeClasses.Kind, Name: class}
	status := NodePoolStatus{Resources: corev1.ResourceList{}}
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods, corev1.ResourceEphemeralStorage} {
		status.Resources[name] = resource.Quantity{}
	}
	for _, c := range in.Claims {
		if len(c.Capacity) == 0 || disrupting(c.Claim.Lifecycle) {
			continue
		}
		status.Nodes++
		for name, q := range c.Capacity {
			sum := status.Resources[name]
			sum.Add(q)
			status.Resources[name] = sum
		}
	}
	status.Resources["nodes"] = *resource.NewQuantity(status.Nodes, resource.DecimalSI)
	for name, q := range status.Resources {
		// Canonical quantities, so equal sums hash alike however they were added up.
		status.Resources[name] = resource.MustParse(q.String())
	}
	at := metav1.NewTime(now.UTC().Truncate(time.Second))
	cond := func(typ string, ok bool, reason, message string) metav1.Condition {
		s := metav1.ConditionTrue
		if !ok {
			s = metav1.ConditionFalse
		}
		return metav1.Condition{Type: typ, Status: s, Reason: reason, Message: message, LastTransitionTime: at}
	}
	validation := cond(apis.ConditionTypeValidationSucceeded, true, apis.ConditionTypeValidationSucceeded, "")
	if in.Invalid != "" {
		validation = cond(apis.ConditionTypeValidationSucceeded, false, ReasonNodePoolValidationFailed, in.Invalid)
	}
	var classReady metav1.Condition
	switch c := in.Class; {
	case c == nil:
		classReady = cond(apis.ConditionTypeNodeClassReady, false, ReasonNodeClassNotFound, fmt.Sprintf("EC2NodeClass %s is not configured", class))
	case c.Status == metav1.ConditionTrue:
		classReady = cond(apis.ConditionTypeNodeClassReady, true, apis.ConditionTypeNodeClassReady, "")
	case c.Status == metav1.ConditionFalse:
		classReady = cond(apis.ConditionTypeNodeClassReady, false, c.Reason, c.Message)
	default:
		classReady = cond(apis.ConditionTypeNodeClassReady, false, ReasonNodeClassReadinessUnknown, fmt.Sprintf("EC2NodeClass %s's readiness is not known", class))
	}
	registration := registrationHealth(in)
	registration.LastTransitionTime = at
	ready := cond(apis.ConditionTypeReady, true, apis.ConditionTypeReady, "")
	for _, c := range []metav1.Condition{validation, classReady} {
		if c.Status != metav1.ConditionTrue {
			ready = cond(apis.ConditionTypeReady, false, c.Reason, c.Type+" is not true: "+c.Message)
			break
		}
	}
	status.Conditions = []metav1.Condition{validation, classReady, registration, ready}
	labels := map[string]string{}
	for k, v := range np.Labels {
		labels[k] = v
	}
	return Object{Name: np.Name, Labels: labels, Spec: spec, Status: status}
}

// disrupting says a claim is on its way out: Karpenter counts a node marked for deletion for nothing.
func disrupting(l state.Lifecycle) bool {
	return l == state.Draining || l == state.Terminating || l == state.Deleted
}

// registrationHealth is Karpenter's NodeRegistrationHealthy from the pool's live claims: the newest
// registrationWindow outcomes among claims launched with the pool's current template and class (a
// registration, at its time; a registration timeout, at the hand-over), unhealthy when
// registrationFailures of them failed; Unknown when there is none.
func registrationHealth(in Pool) metav1.Condition {
	type outcome struct {
		at time.Time
		ok bool
	}
	var outcomes []outcome
	for _, pc := range in.Claims {
		c := pc.Claim
		if (in.TemplateHash != "" && c.TemplateHash != "" && c.TemplateHash != in.TemplateHash) ||
			(in.ClassHash != "" && c.NodeClassHash != "" && c.NodeClassHash != in.ClassHash) {
			continue
		}
		switch {
		case c.RegisteredAt != nil:
			outcomes = append(outcomes, outcome{at: *c.RegisteredAt, ok: true})
		case c.DisruptionReason == RegistrationTimeoutReason:
			at := c.CreatedAt
			for _, t := range []*time.Time{c.DrainingAt, c.TerminatingAt, c.TerminationSentAt} {
				if t != nil {
					at = *t
					break
				}
			}
			outcomes = append(outcomes, outcome{at: at})
		}
	}
	typ := apis.ConditionTypeNodeRegistrationHealthy
	if len(outcomes) == 0 {
		return metav1.Condition{Type: typ, Status: metav1.ConditionUnknown, Reason: ReasonAwaitingRegistration,
			Message: "no node of the NodePool's current template and EC2NodeClass has registered or timed out yet"}
	}
	slices.SortFunc(outcomes, func(a, b outcome) int { return b.at.Compare(a.at) })
	failed := 0
	for _, o := range outcomes[:min(len(outcomes), registrationWindow)] {
		if !o.ok {
			failed++
		}
	}
	if failed >= registrationFailures {
		return metav1.Condition{Type: typ, Status: metav1.ConditionFalse, Reason: ReasonRegistrationFailed,
			Message: fmt.Sprintf("%d of the last %d nodes launched did not register within the registration timeout", failed, registrationWindow)}
	}
	return metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: typ}
}

// KeepTransitionTimes gives each condition of conds the time of the same condition in prev when its
// status did not change, so a mirror rewritten for another reason keeps when each condition last
// transitioned.
func KeepTransitionTimes(conds, prev []metav1.Condition) {
	for i := range conds {
		j := slices.IndexFunc(prev, func(p metav1.Condition) bool { return p.Type == conds[i].Type })
		if j >= 0 && prev[j].Status == conds[i].Status && !prev[j].LastTransitionTime.IsZero() {
			conds[i].LastTransitionTime = prev[j].LastTransitionTime
		}
	}
}

// readyOf is the Ready condition among conds (nil: none).
func readyOf(conds []metav1.Condition) *metav1.Condition {
	i := slices.IndexFunc(conds, func(c metav1.Condition) bool { return c.Type == apis.ConditionTypeReady })
	if i < 0 {
		return nil
	}
	c := conds[i]
	return &c
}

// sortedByName orders objects by name.
func sortedByName(objs []Object) {
	slices.SortFunc(objs, func(a, b Object) int { return cmp.Compare(a.Name, b.Name) })
}
