package mirror

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
)

// NodeClaim condition types beyond the ones apis names (Karpenter's names).
const (
	ConditionReady = "Ready"
)

// ConsolidatableMessage is the message of a NodeClaim mirror's Consolidatable condition.
const ConsolidatableMessage = "no pod has been bound to or removed from the node for its NodePool's consolidateAfter"

// Claim is what the NodeClaim mirror of one claim is built from.
type Claim struct {
	// Record is the claim as read from the state table.
	Record state.Claim
	// Lifecycle is where the claim is as the caller left it (a pass may have moved it since it read the
	// record); empty means Record.Lifecycle.
	Lifecycle state.Lifecycle
	// Node is the claim's Node when the cluster has it (nil when not).
	Node *corev1.Node
	// Waiting is why the claim's Node is not registered or initialized yet, "Reason: message" or
	// "Reason" (lifecycle.RunReport.Waiting); empty when unknown.
	Waiting string
	// Now dates a condition whose time the record does not hold yet (a move made after the record was
	// read). Conditions' times are left out of the hash, so this never causes a write of its own.
	Now time.Time
}

// Object is one mirror as the writer writes it: its name, labels, finalizers, spec and status.
type Object struct {
	Name   string
	Labels map[string]string
	// Finalizers are put on the mirror (NodeClaim mirrors carry Finalizer; see finalizer.go).
	Finalizers []string
	Spec       any
	Status     any
	// ClaimVersion is the version of the claim record the mirror was built from (0: not a claim's). It
	// is written as ClaimVersionAnnotation, outside the hash: a targeted writer never replaces a mirror
	// built from a newer record with one built from an older (see Follower).
	ClaimVersion int64
}

// NodeClaimSpec is the spec of the NodeClaim mirror, in Karpenter's NodeClaim shape.
type NodeClaimSpec struct {
	Requirements           []apis.NodeSelectorRequirementWithMinValues `json:"requirements"`
	Resources              NodeClaimResources                          `json:"resources,omitempty"`
	NodeClassRef           apis.NodeClassReference                     `json:"nodeClassRef"`
	ExpireAfter            string                                      `json:"expireAfter,omitempty"`
	TerminationGracePeriod string                                      `json:"terminationGracePeriod,omitempty"`
}

// NodeClaimResources are the requests the claim was sized for.
type NodeClaimResources struct {
	Requests map[string]string `json:"requests,omitempty"`
}

// NodeClaimStatus is the status of the NodeClaim mirror, in Karpenter's NodeClaim shape.
type NodeClaimStatus struct {
	ProviderID  string              `json:"providerID,omitempty"`
	NodeName    string              `json:"nodeName,omitempty"`
	ImageID     string              `json:"imageID,omitempty"`
	Capacity    corev1.ResourceList `json:"capacity,omitempty"`
	Allocatable corev1.ResourceList `json:"allocatable,omitempty"`
	Conditions  []metav1.Condition  `json:"conditions,omitempty"`
}

// NodeClaim builds the NodeClaim mirror of a claim. Its labels are the claim's (with the instance type,
// zone, capacity type and NodePool the printer columns read); its spec the launch's options
// (node.kubernetes.io/instance-type In the instance types handed to the launch), the claim's labels as
// single-value requirements, the node class, the requests, expiry and grace period; its status the
// instance, the Node and Karpenter's conditions (see conditions).
func NodeClaim(in Claim) Object {
	c := in.Record
	if in.Lifecycle == "" {
		in.Lifecycle = c.Lifecycle
	}
	labels := maps.Clone(c.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	setIf(labels, apis.NodePoolLabelKey, c.NodePool)
	setIf(labels, corev1.LabelInstanceTypeStable, c.InstanceType)
	setIf(labels, corev1.LabelTopologyZone, c.Zone)
	setIf(labels, apis.CapacityTypeLabelKey, c.CapacityType)

	spec := NodeClaimSpec{
		NodeClassRef: apis.NodeClassReference{Group: Group, Kind: EC2NodeClasses.Kind, Name: c.NodeClass},
		Resources:    NodeClaimResources{Requests: c.Requests},
		ExpireAfter:  c.ExpireAfter,
		Requirements: []apis.NodeSelectorRequirementWithMinValues{},
	}
	if c.TerminationGracePeriod != nil {
		spec.TerminationGracePeriod = c.TerminationGracePeriod.String()
	}
	if len(c.InstanceTypes) > 0 {
		spec.Requirements = append(spec.Requirements, apis.NodeSelectorRequirementWithMinValues{
			Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpIn, Values: slices.Clone(c.InstanceTypes)})
	}
	for _, k := range slices.Sorted(maps.Keys(c.Labels)) {
		if k == corev1.LabelInstanceTypeStable || k == corev1.LabelHostname {
			continue
		}
		spec.Requirements = append(spec.Requirements, apis.NodeSelectorRequirementWithMinValues{
			Key: k, Operator: corev1.NodeSelectorOpIn, Values: []string{c.Labels[k]}})
	}

	status := NodeClaimStatus{ProviderID: c.ProviderID, NodeName: c.NodeName, ImageID: c.ImageID, Conditions: conditions(in)}
	if n := in.Node; n != nil {
		if status.NodeName == "" {
			status.NodeName = n.Name
		}
		if status.ProviderID == "" {
			status.ProviderID = n.Spec.ProviderID
		}
		status.Capacity, status.Allocatable = n.Status.Capacity, n.Status.Allocatable
	}
	return Object{Name: c.Name, Labels: labels, Finalizers: []string{Finalizer}, Spec: spec, Status: status, ClaimVersion: c.Version}
}

func setIf(m map[string]string, k, v string) {
	if v != "" {
		m[k] = v
	}
}

// conditions are Karpenter's NodeClaim conditions, from the record:
//   - Launched, Registered, Initialized: True once the claim got there (dated when it did); before, Unknown
//     with the reason the pass gave for waiting (NodeNotFound, StartupTaintsExist...) or Karpenter's
//     default.
//   - Ready: True when all three are; otherwise False with the reason and message of the first that is
//     not (Karpenter leaves it Unknown then; False makes a launched-but-unregistered claim stand out).
//   - Drifted: True with the drift's reason and what drifted, while the claim is drifted; absent otherwise.
//   - DisruptionReason: True, with why, while a disruption command holds the claim as a candidate (its
//     Node tainted, its replacements launching) and while the claim drains or terminates (Expired,
//     Drifted, Underutilized, Interrupted...).
//   - Drained: while a disruption request waits for its replacement or the node drains, Unknown with why;
//     True once the instance terminates (see drained, deletion.go).
//   - Consolidatable: True, dated when the disruption run found it, while the claim is initialized and
//     its record carries the run's Consolidatable mark (consolidateAfter has passed since the node
//     initialized or its pods last changed); absent otherwise, as in Karpenter.
func conditions(in Claim) []metav1.Condition {
	c, l := in.Record, in.Lifecycle
	at := func(t *time.Time) metav1.Time {
		switch {
		case t != nil:
			return metav1.NewTime(t.UTC().Truncate(time.Second))
		case !in.Now.IsZero():
			return metav1.NewTime(in.Now.UTC().Truncate(time.Second))
		}
		return metav1.NewTime(c.CreatedAt.UTC().Truncate(time.Second))
	}
	waitReason, waitMessage := splitWaiting(in.Waiting)
	unknown := func(typ, reason, message string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: metav1.ConditionUnknown, Reason: reason, Message: message, LastTransitionTime: at(&c.CreatedAt)}
	}
	var out []metav1.Condition
	// A pending claim has not launched; one that went from pending straight to terminating (its launch
	// failed) has no instance to show for it.
	launched := l != state.Pending && (c.InstanceID != "" || c.LaunchedAt != nil || l != state.Terminating)
	if launched {
		out = append(out, metav1.Condition{Type: apis.ConditionTypeLaunched, Status: metav1.ConditionTrue, Reason: apis.ConditionTypeLaunched, LastTransitionTime: at(c.LaunchedAt)})
	} else {
		out = append(out, unknown(apis.ConditionTypeLaunched, "AwaitingLaunch", "the launch has not been answered yet"))
	}
	registered := c.NodeName != "" || c.RegisteredAt != nil || l == state.Registered || l == state.Initialized
	switch {
	case registered:
		out = append(out, metav1.Condition{Type: apis.ConditionTypeRegistered, Status: metav1.ConditionTrue, Reason: apis.ConditionTypeRegistered, LastTransitionTime: at(c.RegisteredAt)})
	case l == state.Launched && waitReason != "":
		out = append(out, unknown(apis.ConditionTypeRegistered, waitReason, waitMessage))
	default:
		out = append(out, unknown(apis.ConditionTypeRegistered, "NodeNotFound", "Node not registered with cluster"))
	}
	initialized := c.InitializedAt != nil || l == state.Initialized
	switch {
	case initialized:
		out = append(out, metav1.Condition{Type: apis.ConditionTypeInitialized, Status: metav1.ConditionTrue, Reason: apis.ConditionTypeInitialized, LastTransitionTime: at(c.InitializedAt)})
	case l == state.Registered && waitReason != "":
		out = append(out, unknown(apis.ConditionTypeInitialized, waitReason, waitMessage))
	default:
		out = append(out, unknown(apis.ConditionTypeInitialized, "NotInitialized", "Node not initialized"))
	}
	ready := metav1.Condition{Type: ConditionReady, Status: metav1.ConditionTrue, Reason: ConditionReady, LastTransitionTime: at(c.InitializedAt)}
	for _, cond := range out {
		if cond.Status != metav1.ConditionTrue {
			ready = metav1.Condition{Type: ConditionReady, Status: metav1.ConditionFalse, Reason: cond.Reason,
				Message: strings.TrimSpace(cond.Type + " is not true: " + cond.Message), LastTransitionTime: cond.LastTransitionTime}
			break
		}
	}
	out = append(out, ready)
	if d := c.Drifted; d != nil {
		out = append(out, metav1.Condition{Type: apis.ConditionTypeDrifted, Status: metav1.ConditionTrue, Reason: d.Reason,
			Message: driftMessage(d.Details), LastTransitionTime: at(&d.Since)})
	}
	if l == state.Draining || l == state.Terminating {
		reason := c.DisruptionReason
		if reason == "" {
			reason = "Disrupted"
		}
		msg := "the node is being drained"
		since := c.DrainingAt
		if l == state.Terminating {
			msg, since = "the node's instance is being terminated", c.TerminatingAt
		}
		if c.GoneBy != nil {
			msg += fmt.Sprintf("; the instance is gone by %s", c.GoneBy.UTC().Format(time.RFC3339))
		}
		out = append(out, metav1.Condition{Type: apis.ConditionTypeDisruptionReason, Status: metav1.ConditionTrue, Reason: reason,
			Message: msg, LastTransitionTime: at(since)})
	}
	if m := c.Consolidatable; m != nil && l == state.Initialized {
		out = append(out, metav1.Condition{Type: apis.ConditionTypeConsolidatable, Status: metav1.ConditionTrue,
			Reason: apis.ConditionTypeConsolidatable, Message: ConsolidatableMessage, LastTransitionTime: at(&m.Since)})
	}
	if m := c.Disrupting; m != nil && l.InService() {
		out = append(out, disruptingCondition(m, at))
	}
	if d, ok := drained(c, l, at); ok {
		out = append(out, d)
	}
	return out
}

// splitWaiting splits "Reason: message"; a reason must be a CamelCase word (a condition's reason format).
func splitWaiting(w string) (reason, message string) {
	reason, message, _ = strings.Cut(w, ": ")
	if reason == "" || strings.ContainsAny(reason, " ,:;") {
		return "", ""
	}
	return reason, message
}

// driftMessage lists what drifted, sorted by key.
func driftMessage(details map[string]string) string {
	parts := make([]string, 0, len(details))
	for _, k := range slices.Sorted(maps.Keys(details)) {
		parts = append(parts, k+"="+details[k])
	}
	return strings.Join(parts, ", ")
}

// disruptingCondition is DisruptionReason while a disruption command holds the claim before its drain.
func disruptingCondition(m *state.DisruptingMark, at func(*time.Time) metav1.Time) metav1.Condition {
	msg := "the node is tainted karpenter.sh/disrupted:NoSchedule by disruption command " + m.Command
	if len(m.Replacements) > 0 {
		msg += "; waiting on readiness of replacement " + strings.Join(m.Replacements, ", ")
	}
	reason := m.Reason
	if reason == "" {
		reason = "Disrupted"
	}
	since := m.Since
	return metav1.Condition{Type: apis.ConditionTypeDisruptionReason, Status: metav1.ConditionTrue, Reason: reason, Message: msg,
		LastTransitionTime: at(&since)}
}
