package capacitybuffer

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The CapacityBuffer API of SIG Autoscaling, as Karpenter reads it.
const (
	Group    = "autoscaling.x-k8s.io"
	Version  = "v1beta1"
	Resource = "capacitybuffers"
	Kind     = "CapacityBuffer"
	// ActiveCapacity is the only provisioning strategy Karpenter (and Nodewright) acts on, and the
	// default when a buffer names none: keep the room at all times.
	ActiveCapacity = "buffer.x-k8s.io/active-capacity"
)

// Condition types of a buffer's status.
const (
	ConditionReadyForProvisioning = "ReadyForProvisioning"
	ConditionProvisioning         = "Provisioning"
	// ConditionLimitedByQuotas is the API's condition for a buffer cut down by the namespace's
	// ResourceQuotas. Karpenter never writes it and neither does Nodewright: no quota is read.
	ConditionLimitedByQuotas = "LimitedByQuotas"
)

// Reasons, Karpenter's: on ReadyForProvisioning (its buffer controller's) and on Provisioning (its
// provisioner's).
const (
	ReasonResolved            = "Resolved"
	ReasonPodTemplateNotFound = "PodTemplateNotFound"
	ReasonScalableRefNotFound = "ScalableRefNotFound"
	ReasonResolutionFailed    = "ResolutionFailed"

	ReasonNotReadyForProvisioning = "NotReadyForProvisioning"
	ReasonBufferEmpty             = "BufferEmpty"
	ReasonRequiresNewCapacity     = "RequiresNewCapacity"
	ReasonFitsExistingCapacity    = "FitsExistingCapacity"
)

// The kinds a scalableRef may name (API group apps, the default).
const (
	KindDeployment  = "Deployment"
	KindStatefulSet = "StatefulSet"
	KindReplicaSet  = "ReplicaSet"
)

// CapacityBuffer is the part of an autoscaling.x-k8s.io/v1beta1 CapacityBuffer Nodewright reads and
// writes. Fields it does not know are kept by the status write (see Buffer.Raw).
type CapacityBuffer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              Spec   `json:"spec"`
	Status            Status `json:"status,omitempty"`
}

// LocalObjectRef names an object in the buffer's namespace.
type LocalObjectRef struct {
	Name string `json:"name"`
}

// ScalableRef names a workload with a scale subresource in the buffer's namespace.
type ScalableRef struct {
	APIGroup string `json:"apiGroup,omitempty"`
	Kind     string `json:"kind"`
	Name     string `json:"name"`
}

// Spec is what the buffer asks for: the shape of one chunk (a PodTemplate, or the pod template of a
// workload) and how many chunks (replicas, a percentage of the workload's replicas, and limits on
// their total requests).
type Spec struct {
	ProvisioningStrategy *string             `json:"provisioningStrategy,omitempty"`
	PodTemplateRef       *LocalObjectRef     `json:"podTemplateRef,omitempty"`
	ScalableRef          *ScalableRef        `json:"scalableRef,omitempty"`
	Replicas             *int32              `json:"replicas,omitempty"`
	Percentage           *int32              `json:"percentage,omitempty"`
	Limits               corev1.ResourceList `json:"limits,omitempty"`
}

// Status is what the autoscaler observed.
type Status struct {
	PodTemplateRef        *LocalObjectRef    `json:"podTemplateRef,omitempty"`
	Replicas              *int32             `json:"replicas,omitempty"`
	PodTemplateGeneration *int64             `json:"podTemplateGeneration,omitempty"`
	Conditions            []metav1.Condition `json:"conditions,omitempty"`
	ProvisioningStrategy  *string            `json:"provisioningStrategy,omitempty"`
}

// Key is "namespace/name".
func (b *CapacityBuffer) Key() string { return b.Namespace + "/" + b.Name }

// strategy is the buffer's provisioning strategy, the default when it names none.
func (b *CapacityBuffer) strategy() string {
	if b.Spec.ProvisioningStrategy == nil || *b.Spec.ProvisioningStrategy == "" {
		return ActiveCapacity
	}
	return *b.Spec.ProvisioningStrategy
}

// condition returns the buffer's condition of type t, or nil.
func condition(conds []metav1.Condition, t string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}
