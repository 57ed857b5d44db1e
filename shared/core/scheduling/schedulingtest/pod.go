package schedulingtest

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// epoch is the creation time of built objects; Created offsets from it.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// PodOptions describes a pod. Zero values give a pending, unschedulable pod in "default" with no
// requests.
type PodOptions struct {
	Name, Namespace string
	// CPU and Memory are request quantities ("500m", "1Gi").
	CPU, Memory string
	// Requests adds or overrides any resource request (GPUs, ephemeral storage...).
	Requests corev1.ResourceList
	// Owner makes the pod controlled by a ReplicaSet of that name (UID derived from it).
	Owner        string
	Labels       map[string]string
	NodeSelector map[string]string
	// NodeRequirements is one required node-affinity term; NodeRequirementTerms several OR-ed terms.
	NodeRequirements     []corev1.NodeSelectorRequirement
	NodeRequirementTerms [][]corev1.NodeSelectorRequirement
	// NodePreferences are preferred terms, weights 100, 99, 98... unless Weights is set.
	NodePreferences [][]corev1.NodeSelectorRequirement
	Weights         []int32
	Tolerations     []corev1.Toleration
	HostPorts       []int32
	InitContainers  []corev1.Container
	Overhead        corev1.ResourceList
	Spread          []corev1.TopologySpreadConstraint
	// Created offsets the creation timestamp from a fixed epoch.
	Created time.Duration
	// NodeName binds the pod.
	NodeName string
}

// Pod builds one pod.
func Pod(o PodOptions) *corev1.Pod {
	if o.Namespace == "" {
		o.Namespace = "default"
	}
	if o.Name == "" {
		o.Name = "pod"
	}
	req := corev1.ResourceList{}
	if o.CPU != "" {
		req[corev1.ResourceCPU] = resource.MustParse(o.CPU)
	}
	if o.Memory != "" {
		req[corev1.ResourceMemory] = resource.MustParse(o.Memory)
	}
	for k, v := range o.Requests {
		req[k] = v
	}
	c := corev1.Container{Name: "app", Resources: corev1.ResourceRequirements{Requests: req}}
	for _, p := range o.HostPorts {
		c.Ports = append(c.Ports, corev1.ContainerPort{ContainerPort: p, HostPort: p})
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: o.Name, Namespace: o.Namespace, UID: types.UID(o.Namespace + "/" + o.Name),
			Labels: o.Labels, CreationTimestamp: metav1.NewTime(epoch.Add(o.Created)),
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{c}, InitContainers: o.InitContainers, NodeSelector: o.NodeSelector,
			Tolerations: o.Tolerations, Overhead: o.Overhead, TopologySpreadConstraints: o.Spread, NodeName: o.NodeName,
		},
	}
	if o.Owner != "" {
		yes := true
		pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: o.Owner, UID: types.UID("rs-" + o.Owner), Controller: &yes}}
	}
	terms := o.NodeRequirementTerms
	if len(o.NodeRequirements) > 0 {
		terms = append([][]corev1.NodeSelectorRequirement{o.NodeRequirements}, terms...)
	}
	if len(terms) > 0 || len(o.NodePreferences) > 0 {
		na := &corev1.NodeAffinity{}
		if len(terms) > 0 {
			na.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{}
			for _, t := range terms {
				na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms = append(na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms, corev1.NodeSelectorTerm{MatchExpressions: t})
			}
		}
		for i, p := range o.NodePreferences {
			w := int32(100 - i)
			if i < len(o.Weights) {
				w = o.Weights[i]
			}
			na.PreferredDuringSchedulingIgnoredDuringExecution = append(na.PreferredDuringSchedulingIgnoredDuringExecution, corev1.PreferredSchedulingTerm{Weight: w, Preference: corev1.NodeSelectorTerm{MatchExpressions: p}})
		}
		pod.Spec.Affinity = &corev1.Affinity{NodeAffinity: na}
	}
	if o.NodeName == "" {
		pod.Status.Phase = corev1.PodPending
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}
	} else {
		pod.Status.Phase = corev1.PodRunning
	}
	return pod
}

// Pods builds n pods named <Name>-0..n-1 sharing the options (and so, with an Owner, one class).
func Pods(n int, o PodOptions) []*corev1.Pod {
	base := o.Name
	if base == "" {
		base = "pod"
	}
	out := make([]*corev1.Pod, n)
	for i := range out {
		o.Name = fmt.Sprintf("%s-%d", base, i)
		out[i] = Pod(o)
	}
	return out
}

// In is a shorthand for an In node selector requirement.
func In(key string, values ...string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: key, Operator: corev1.NodeSelectorOpIn, Values: values}
}

// Req is a shorthand for any node selector requirement.
func Req(key string, op corev1.NodeSelectorOperator, values ...string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: key, Operator: op, Values: values}
}
