package scheduling

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// daemon is a DaemonSet as the scheduler needs it: the pod it would run on every matching node.
type daemon struct {
	ds        *appsv1.DaemonSet
	pod       *corev1.Pod
	requests  Resources
	hostPorts []HostPort
	steps     []Attempt
}

// daemonPod synthesises the pod a DaemonSet would create from its template.
func daemonPod(ds *appsv1.DaemonSet) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       ds.Namespace,
			Name:            ds.Name,
			Labels:          ds.Spec.Template.Labels,
			OwnerReferences: []metav1.OwnerReference{{Kind: "DaemonSet", Name: ds.Name, UID: ds.UID}},
		},
		Spec: ds.Spec.Template.Spec,
	}
}

func newDaemons(dss []*appsv1.DaemonSet) []*daemon {
	out := make([]*daemon, 0, len(dss))
	for _, ds := range dss {
		pod := daemonPod(ds)
		steps, err := RelaxationSteps(pod, false)
		if err != nil {
			continue // a DaemonSet Karpenter cannot model adds no overhead
		}
		out = append(out, &daemon{ds: ds, pod: pod, requests: PodRequests(pod), hostPorts: PodHostPorts(pod), steps: steps})
	}
	return out
}

// compatible reports whether the daemon would run on a node with these taints and requirements.
// PreferNoSchedule taints are tolerated and any of the daemon's node-affinity terms may match, as
// Karpenter relaxes daemon pods fully when estimating overhead.
func (d *daemon) compatible(taints []corev1.Taint, reqs Requirements) bool {
	if Tolerates(d.pod.Spec.Tolerations, taints, false) != nil {
		return false
	}
	for _, s := range d.steps {
		if reqs.Compatible(s.Requirements) == nil {
			return true
		}
	}
	return false
}

// runsOn reports whether one of the given pods belongs to the daemon.
func (d *daemon) runsOn(pods []*corev1.Pod) bool {
	for _, p := range pods {
		for _, o := range p.OwnerReferences {
			if o.Kind != "DaemonSet" {
				continue
			}
			if (d.ds.UID != "" && o.UID == d.ds.UID) || (o.Name == d.ds.Name && p.Namespace == d.ds.Namespace) {
				return true
			}
		}
	}
	return false
}

// daemonOverhead sums the requests and host ports of the daemons compatible with a node.
func daemonOverhead(daemons []*daemon, taints []corev1.Taint, reqs Requirements) (Resources, []HostPort) {
	var total Resources
	var ports []HostPort
	for _, d := range daemons {
		if d.compatible(taints, reqs) {
			total = total.Add(d.requests)
			ports = append(ports, d.hostPorts...)
		}
	}
	return total, ports
}
