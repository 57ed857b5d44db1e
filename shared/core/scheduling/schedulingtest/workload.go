package schedulingtest

import (
	"fmt"
	"math/rand/v2"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RandomPods builds n pending pods with CPU requests uniform in 100m–1500m and memory in 100Mi–4Gi, as
// Karpenter's scheduling benchmark does, from a fixed seed. Every pod is its own class.
func RandomPods(n int, seed uint64) []*corev1.Pod {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	out := make([]*corev1.Pod, n)
	for i := range out {
		cpu := 100 + r.IntN(1401)
		mem := 100 + r.IntN(4*1024-100+1)
		out[i] = Pod(PodOptions{Name: fmt.Sprintf("random-%d", i), CPU: fmt.Sprintf("%dm", cpu), Memory: fmt.Sprintf("%dMi", mem)})
	}
	return out
}

// Deployment is one replica set of identical pods in a mixed workload.
type Deployment struct {
	Name        string
	Replicas    int
	CPU, Memory string
}

// MixedWorkload returns deployments of typical web, worker, cache and batch shapes.
func MixedWorkload(scale int) []Deployment {
	return []Deployment{
		{"web", 40 * scale, "250m", "512Mi"},
		{"api", 25 * scale, "1", "2Gi"},
		{"worker", 15 * scale, "2", "4Gi"},
		{"cache", 6 * scale, "500m", "8Gi"},
		{"batch", 8 * scale, "4", "6Gi"},
		{"ml", 2 * scale, "8", "32Gi"},
		{"sidecarheavy", 4 * scale, "150m", "256Mi"},
	}
}

// DeploymentPods expands deployments into pods, each deployment one class.
func DeploymentPods(ds []Deployment) []*corev1.Pod {
	var out []*corev1.Pod
	for _, d := range ds {
		out = append(out, Pods(d.Replicas, PodOptions{Name: d.Name, Owner: d.Name, CPU: d.CPU, Memory: d.Memory, Labels: map[string]string{"app": d.Name}})...)
	}
	return out
}

// KarpenterMix builds n pending pods like Karpenter's scheduling benchmark: random CPU (100m–1500m) and
// memory (100Mi–4Gi) requests in five equal groups — no constraint, zone spread (maxSkew 1), hostname
// spread (maxSkew 1), zone self-affinity, and hostname self-anti-affinity.
func KarpenterMix(n int, seed uint64) []*corev1.Pod {
	pods := RandomPods(n, seed)
	for i, p := range pods {
		sel := func(app string) *metav1.LabelSelector {
			return &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
		}
		switch i % 5 {
		case 1:
			p.Labels = map[string]string{"app": "spread-zone"}
			p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone, WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: sel("spread-zone")}}
		case 2:
			p.Labels = map[string]string{"app": "spread-host"}
			p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: sel("spread-host")}}
		case 3:
			p.Labels = map[string]string{"app": "affinity-zone"}
			p.Spec.Affinity = &corev1.Affinity{PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: corev1.LabelTopologyZone, LabelSelector: sel("affinity-zone")}}}}
		case 4:
			p.Labels = map[string]string{"app": "anti-host"}
			p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: corev1.LabelHostname, LabelSelector: sel("anti-host")}}}}
		}
	}
	return pods
}
