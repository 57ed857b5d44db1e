package schedulingtest

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// NodePool builds a NodePool with the given name and options applied.
func NodePool(name string, opts ...func(*scheduling.NodePool)) scheduling.NodePool {
	p := scheduling.NodePool{Name: name}
	for _, o := range opts {
		o(&p)
	}
	return p
}

// Weight sets a NodePool's weight.
func Weight(w int32) func(*scheduling.NodePool) { return func(p *scheduling.NodePool) { p.Weight = w } }

// Requirement adds a NodePool requirement.
func Requirement(key string, op scheduling.Operator, values ...string) func(*scheduling.NodePool) {
	return func(p *scheduling.NodePool) {
		p.Requirements = append(p.Requirements, scheduling.NodeSelectorRequirement{Key: key, Operator: op, Values: values})
	}
}

// MinValues adds a requirement with minValues.
func MinValues(key string, op scheduling.Operator, minValues int, values ...string) func(*scheduling.NodePool) {
	return func(p *scheduling.NodePool) {
		p.Requirements = append(p.Requirements, scheduling.NodeSelectorRequirement{Key: key, Operator: op, Values: values, MinValues: &minValues})
	}
}

// Taint adds a NodePool taint.
func Taint(key, value string, effect corev1.TaintEffect) func(*scheduling.NodePool) {
	return func(p *scheduling.NodePool) {
		p.Taints = append(p.Taints, corev1.Taint{Key: key, Value: value, Effect: effect})
	}
}

// StartupTaint adds a NodePool startup taint.
func StartupTaint(key string, effect corev1.TaintEffect) func(*scheduling.NodePool) {
	return func(p *scheduling.NodePool) {
		p.StartupTaints = append(p.StartupTaints, corev1.Taint{Key: key, Effect: effect})
	}
}

// Labels sets NodePool template labels.
func Labels(l map[string]string) func(*scheduling.NodePool) {
	return func(p *scheduling.NodePool) { p.Labels = l }
}

// Limits sets NodePool limits from "name=quantity" pairs.
func Limits(kv ...string) func(*scheduling.NodePool) {
	return func(p *scheduling.NodePool) {
		p.Limits = corev1.ResourceList{}
		for i := 0; i+1 < len(kv); i += 2 {
			p.Limits[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
		}
	}
}

// NodeOptions describes an existing node.
type NodeOptions struct {
	Name        string
	Labels      map[string]string
	Taints      []corev1.Taint
	CPU, Memory string
	Pods        int64
}

// Node builds a node with the given allocatable (and equal capacity).
func Node(o NodeOptions) *corev1.Node {
	labels := map[string]string{corev1.LabelHostname: o.Name}
	for k, v := range o.Labels {
		labels[k] = v
	}
	if o.Pods == 0 {
		o.Pods = 110
	}
	alloc := corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse(o.CPU),
		corev1.ResourceMemory:           resource.MustParse(o.Memory),
		corev1.ResourcePods:             *resource.NewQuantity(o.Pods, resource.DecimalSI),
		corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: o.Name, Labels: labels, UID: types.UID("node-" + o.Name)},
		Spec:       corev1.NodeSpec{Taints: o.Taints},
		Status:     corev1.NodeStatus{Allocatable: alloc, Capacity: alloc},
	}
}

// DaemonSet builds a DaemonSet whose pods request cpu and memory.
func DaemonSet(name, cpu, memory string, tolerations ...corev1.Toleration) *appsv1.DaemonSet {
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system", UID: types.UID("ds-" + name)},
		Spec: appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Tolerations: tolerations,
			Containers: []corev1.Container{{Name: name, Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory),
			}}}},
		}}},
	}
}
