package apis

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodeClaim (karpenter.sh/v1) is Nodewright's record of one node it launched or is launching: the
// requirements the launch had to meet and what came of it. Nodewright keeps it in its state table rather
// than in the cluster, in the same shape as Karpenter's NodeClaim so tools and people read it alike. Its
// spec is immutable once written.
type NodeClaim struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   NodeClaimSpec   `json:"spec"`
	Status NodeClaimStatus `json:"status,omitempty"`
}

// NodeClaimSpec is what a launch must satisfy.
type NodeClaimSpec struct {
	Taints        []corev1.Taint `json:"taints,omitempty"`
	StartupTaints []corev1.Taint `json:"startupTaints,omitempty"`
	// Requirements are the NodePool's requirements narrowed by the pods it was launched for; they include
	// node.kubernetes.io/instance-type In [candidates] and karpenter.sh/capacity-type In [...].
	Requirements []NodeSelectorRequirementWithMinValues `json:"requirements"`
	// Resources are the requests of the pods it was launched for plus daemonset overhead.
	Resources              ResourceRequirements `json:"resources,omitempty"`
	NodeClassRef           *NodeClassReference  `json:"nodeClassRef"`
	TerminationGracePeriod *Duration            `json:"terminationGracePeriod,omitempty"`
	ExpireAfter            NillableDuration     `json:"expireAfter,omitempty"`
}

// ResourceRequirements holds the resources a NodeClaim was sized for.
type ResourceRequirements struct {
	Requests corev1.ResourceList `json:"requests,omitempty"`
}

// NodeClaimStatus is what happened to a launch.
type NodeClaimStatus struct {
	// NodeName is the Node that registered for the claim.
	NodeName string `json:"nodeName,omitempty"`
	// ProviderID is the instance's provider id, aws:///<zone>/<instance-id>.
	ProviderID string `json:"providerID,omitempty"`
	// ImageID is the AMI the instance was launched from.
	ImageID string `json:"imageID,omitempty"`
	// Capacity and Allocatable are estimated from the instance type until the node reports its own.
	Capacity    corev1.ResourceList `json:"capacity,omitempty"`
	Allocatable corev1.ResourceList `json:"allocatable,omitempty"`
	Conditions  []metav1.Condition  `json:"conditions,omitempty"`
	// LastPodEventTime is the last time a pod was bound to or removed from the node.
	LastPodEventTime metav1.Time `json:"lastPodEventTime,omitempty"`
}

// NodeClaim condition types. Ready is Launched ∧ Registered ∧ Initialized.
const (
	ConditionTypeLaunched             = "Launched"
	ConditionTypeRegistered           = "Registered"
	ConditionTypeInitialized          = "Initialized"
	ConditionTypeConsolidatable       = "Consolidatable"
	ConditionTypeDrifted              = "Drifted"
	ConditionTypeDrained              = "Drained"
	ConditionTypeVolumesDetached      = "VolumesDetached"
	ConditionTypeInstanceTerminating  = "InstanceTerminating"
	ConditionTypeConsistentStateFound = "ConsistentStateFound"
	ConditionTypeDisruptionReason     = "DisruptionReason"
)

// NewNodeClaim starts a NodeClaim from a NodePool's template: labels, annotations, taints, requirements,
// node class, expiry and grace period are copied (deeply), the pool's name becomes the
// karpenter.sh/nodepool label and the class's name the <group>/<kind> label (karpenter.k8s.aws/ec2nodeclass),
// and the pool's hash annotations are set. The caller names the claim, narrows
// the requirements and sets the resources.
func NewNodeClaim(np *NodePool) *NodeClaim {
	t := np.DeepCopy().Spec.Template
	labels := map[string]string{}
	for k, v := range t.ObjectMeta.Labels {
		labels[k] = v
	}
	labels[NodePoolLabelKey] = np.Name
	if ref := t.Spec.NodeClassRef; ref != nil && ref.Group != "" && ref.Kind != "" {
		labels[ref.Group+"/"+strings.ToLower(ref.Kind)] = ref.Name
	}
	annotations := map[string]string{}
	for k, v := range t.ObjectMeta.Annotations {
		annotations[k] = v
	}
	annotations[NodePoolHashAnnotationKey] = NodePoolTemplateHash(np)
	annotations[NodePoolHashVersionAnnotationKey] = NodePoolHashVersion
	return &NodeClaim{
		TypeMeta:   metav1.TypeMeta{APIVersion: NodePoolAPIVersion, Kind: KindNodeClaim},
		ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: annotations},
		Spec: NodeClaimSpec{
			Taints:                 t.Spec.Taints,
			StartupTaints:          t.Spec.StartupTaints,
			Requirements:           t.Spec.Requirements,
			NodeClassRef:           t.Spec.NodeClassRef,
			TerminationGracePeriod: t.Spec.TerminationGracePeriod,
			ExpireAfter:            t.Spec.ExpireAfter,
		},
	}
}

// ProviderID is the provider id of an EC2 instance, as the AWS cloud provider sets it on the Node:
// aws:///<zone>/<instance-id>.
func ProviderID(zone, instanceID string) string { return "aws:///" + zone + "/" + instanceID }

// ParseProviderID splits a provider id made by ProviderID; ok is false for anything else.
func ParseProviderID(id string) (zone, instanceID string, ok bool) {
	rest, found := strings.CutPrefix(id, "aws:///")
	if !found {
		return "", "", false
	}
	zone, instanceID, found = strings.Cut(rest, "/")
	if !found || zone == "" || instanceID == "" || strings.Contains(instanceID, "/") {
		return "", "", false
	}
	return zone, instanceID, true
}
