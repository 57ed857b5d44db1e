package capacitybuffer

import (
	"fmt"
	"maps"
	"math"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// VirtualPodPriority is the priority of a virtual pod, the lowest there is (Karpenter's): its
// eviction cost is the floor, so a node holding only buffer room is the first consolidation
// considers, and moving it never weighs against a move.
const VirtualPodPriority int32 = math.MinInt32

// virtualPods makes n virtual pods of the buffer from template, as Karpenter does: each named
// capacity-buffer-<buffer>-<i> in the buffer's namespace with the uid <buffer uid>-<i> (the same
// in every run, so an in-flight claim made for them is recognised), the template's labels (spread
// and affinity count them), Karpenter's capacity-buffer annotations, the lowest priority, and
// marked unschedulable so the solver treats them as pending. Nothing that would need a real pod
// is kept: no node name, no PersistentVolumeClaim or ephemeral volume (nor their mounts). The
// template's own annotations are not copied (a do-not-disrupt there would hold a node for room).
func virtualPods(b *CapacityBuffer, template *corev1.PodTemplateSpec, n int32) []*corev1.Pod {
	if n <= 0 {
		return nil
	}
	spec := sanitized(template.Spec)
	prio := VirtualPodPriority
	spec.Priority = &prio
	out := make([]*corev1.Pod, 0, n)
	for i := int32(1); i <= n; i++ {
		p := &corev1.Pod{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{
				Name:      fmt.Sprintf("capacity-buffer-%s-%d", b.Name, i),
				Namespace: b.Namespace,
				UID:       types.UID(fmt.Sprintf("%s-%d", b.UID, i)),
				Labels:    maps.Clone(template.Labels),
				Annotations: map[string]string{
					scheduling.AnnotationBufferPod:       "true",
					scheduling.AnnotationBufferName:      b.Name,
					scheduling.AnnotationBufferNamespace: b.Namespace,
				},
				CreationTimestamp: b.CreationTimestamp,
			},
			Spec: *spec.DeepCopy(),
			Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
				Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}},
		}
		out = append(out, p)
	}
	return out
}

// sanitized is spec without what a pod that is never created cannot have: a node name, claims to
// volumes (a PersistentVolumeClaim or a generic ephemeral volume: no claim would ever exist for a
// virtual pod, and the solver would call the pod unschedulable) and the mounts of those volumes.
func sanitized(in corev1.PodSpec) corev1.PodSpec {
	spec := *in.DeepCopy()
	spec.NodeName = ""
	dropped := map[string]bool{}
	var kept []corev1.Volume
	for _, v := range spec.Volumes {
		if v.PersistentVolumeClaim != nil || v.Ephemeral != nil {
			dropped[v.Name] = true
			continue
		}
		kept = append(kept, v)
	}
	spec.Volumes = kept
	if len(dropped) == 0 {
		return spec
	}
	strip := func(cs []corev1.Container) {
		for i := range cs {
			var mounts []corev1.VolumeMount
			for _, m := range cs[i].VolumeMounts {
				if !dropped[m.Name] {
					mounts = append(mounts, m)
				}
			}
			cs[i].VolumeMounts = mounts
		}
	}
	strip(spec.Containers)
	strip(spec.InitContainers)
	return spec
}

// BufferOf is "namespace/name" of the buffer a virtual pod is for, "" for any other pod.
func BufferOf(p *corev1.Pod) string {
	if !scheduling.IsBufferPod(p) {
		return ""
	}
	return p.Annotations[scheduling.AnnotationBufferNamespace] + "/" + p.Annotations[scheduling.AnnotationBufferName]
}
