package apis

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodePool (karpenter.sh/v1) describes a family of nodes Nodewright may launch: what they look like
// (template), how they may be disrupted, and how much of them there may be.
type NodePool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   NodePoolSpec   `json:"spec"`
	Status NodePoolStatus `json:"status,omitempty"`

	// Origin is where the object was decoded from; it is not part of the manifest.
	Origin Origin `json:"-"`
}

// NodePoolList is a list of NodePools.
type NodePoolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NodePool `json:"items"`
}

// NodePoolSpec is the desired state of a NodePool.
type NodePoolSpec struct {
	// Template is what every NodeClaim launched from the pool starts from.
	Template NodeClaimTemplate `json:"template"`
	// Disruption says when and how fast nodes may be consolidated, expired or replaced.
	Disruption Disruption `json:"disruption"`
	// Limits bound the total capacity of the pool's nodes (cpu, memory, nvidia.com/gpu, nodes, …).
	Limits corev1.ResourceList `json:"limits,omitempty"`
	// Weight orders pools: a higher weight is tried first. 1–100; unset means 0.
	Weight *int32 `json:"weight,omitempty"`
	// Replicas makes the pool static: a fixed number of nodes [alpha, gate StaticCapacity].
	Replicas *int64 `json:"replicas,omitempty"`
}

// NodeClaimTemplate is the part of a NodeClaim a NodePool fixes.
type NodeClaimTemplate struct {
	ObjectMeta TemplateObjectMeta    `json:"metadata,omitempty"`
	Spec       NodeClaimTemplateSpec `json:"spec"`
}

// TemplateObjectMeta is the metadata copied to every NodeClaim and Node of a pool.
type TemplateObjectMeta struct {
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// NodeClaimTemplateSpec is the NodeClaim spec a NodePool fixes (everything but resource requests).
type NodeClaimTemplateSpec struct {
	// Taints are placed on the node for its whole life.
	Taints []corev1.Taint `json:"taints,omitempty"`
	// StartupTaints are expected to be removed by something on the node once it is ready; pods need not
	// tolerate them to be provisioned for.
	StartupTaints []corev1.Taint `json:"startupTaints,omitempty"`
	// Requirements constrain the instance types, zones, capacity types, … of launched nodes.
	Requirements []NodeSelectorRequirementWithMinValues `json:"requirements"`
	// NodeClassRef names the EC2NodeClass giving the AWS-specific configuration.
	NodeClassRef *NodeClassReference `json:"nodeClassRef"`
	// TerminationGracePeriod bounds how long draining a node may take; unset means no bound.
	TerminationGracePeriod *Duration `json:"terminationGracePeriod,omitempty"`
	// ExpireAfter is the node lifetime after which it is replaced; default 720h, "Never" disables.
	ExpireAfter NillableDuration `json:"expireAfter,omitempty"`
}

// Operators Karpenter adds to the core node selector operators.
const (
	NodeSelectorOpGte corev1.NodeSelectorOperator = "Gte"
	NodeSelectorOpLte corev1.NodeSelectorOperator = "Lte"
)

// SupportedOperators lists the requirement operators, in the order error messages give them.
var SupportedOperators = []string{
	string(corev1.NodeSelectorOpIn), string(corev1.NodeSelectorOpNotIn),
	string(corev1.NodeSelectorOpExists), string(corev1.NodeSelectorOpDoesNotExist),
	string(corev1.NodeSelectorOpGt), string(corev1.NodeSelectorOpLt),
	string(NodeSelectorOpGte), string(NodeSelectorOpLte),
}

// NodeSelectorRequirementWithMinValues is a node selector requirement that may also ask for a minimum
// number of distinct values across the instance types a launch may choose from.
type NodeSelectorRequirementWithMinValues struct {
	Key      string                      `json:"key"`
	Operator corev1.NodeSelectorOperator `json:"operator"`
	Values   []string                    `json:"values,omitempty"`
	// MinValues (1–50) is the minimum number of distinct values of Key the launch's instance types span.
	MinValues *int `json:"minValues,omitempty"`
}

// NodeClassReference names the node class of a NodePool or NodeClaim.
type NodeClassReference struct {
	Group string `json:"group"`
	Kind  string `json:"kind"`
	Name  string `json:"name"`
}

// ConsolidationPolicy says which nodes consolidation may remove.
type ConsolidationPolicy string

const (
	ConsolidationPolicyWhenEmpty                ConsolidationPolicy = "WhenEmpty"
	ConsolidationPolicyWhenEmptyOrUnderutilized ConsolidationPolicy = "WhenEmptyOrUnderutilized"
	// ConsolidationPolicyBalanced weighs savings against disruption [new].
	ConsolidationPolicyBalanced ConsolidationPolicy = "Balanced"
)

// DisruptionReason is a reason a budget can be limited to.
type DisruptionReason string

const (
	DisruptionReasonUnderutilized DisruptionReason = "Underutilized"
	DisruptionReasonEmpty         DisruptionReason = "Empty"
	DisruptionReasonDrifted       DisruptionReason = "Drifted"
)

// Disruption holds a NodePool's disruption settings.
type Disruption struct {
	// ConsolidateAfter is how long a node must be consolidatable before it is consolidated; default 0s,
	// "Never" disables consolidation.
	ConsolidateAfter NillableDuration `json:"consolidateAfter,omitempty"`
	// ConsolidationPolicy defaults to WhenEmptyOrUnderutilized.
	ConsolidationPolicy ConsolidationPolicy `json:"consolidationPolicy,omitempty"`
	// Budgets limit how many nodes may be disrupted at once; unset means [{nodes: "10%"}], an explicit
	// empty list means no limit.
	Budgets []Budget `json:"budgets,omitempty"`
}

// Budget limits the number of nodes of a pool being disrupted at the same time.
type Budget struct {
	// Reasons the budget applies to; empty means all.
	Reasons []DisruptionReason `json:"reasons,omitempty"`
	// Nodes is a count ("5") or a percentage of the pool's nodes ("10%"); default "10%".
	Nodes string `json:"nodes"`
	// Schedule (cron, UTC) and Duration make the budget active only for Duration after each hit.
	Schedule *string   `json:"schedule,omitempty"`
	Duration *Duration `json:"duration,omitempty"`
}

// NodePoolStatus is what Karpenter reports about a NodePool. Nodewright keeps its own state elsewhere; the
// type exists so that manifests exported from a cluster decode.
type NodePoolStatus struct {
	Resources                   corev1.ResourceList `json:"resources,omitempty"`
	Nodes                       *int64              `json:"nodes,omitempty"`
	NodeClassObservedGeneration int64               `json:"nodeClassObservedGeneration,omitempty"`
	Conditions                  []metav1.Condition  `json:"conditions,omitempty"`
}

// NodePool condition types.
const (
	ConditionTypeValidationSucceeded     = "ValidationSucceeded"
	ConditionTypeNodeClassReady          = "NodeClassReady"
	ConditionTypeNodeRegistrationHealthy = "NodeRegistrationHealthy"
	ConditionTypeReady                   = "Ready"
)

// IsStatic reports whether the pool is static (spec.replicas set).
func (np *NodePool) IsStatic() bool { return np.Spec.Replicas != nil }
