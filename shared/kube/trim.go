package kube

import (
	corev1 "k8s.io/api/core/v1"
)

// lastApplied is kubectl's copy of the whole applied object, often the largest annotation a pod has.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// TrimPod drops what no decision of Nodewright reads, so a cluster of 150,000 pods fits a function's
// memory: managedFields, kubectl's last-applied copy, each container's environment, command, probes,
// lifecycle hooks, mounts and security context, ephemeral containers, the projected volumes' sources and
// every container status. What scheduling, disruption and draining read stays: metadata (labels,
// annotations, owners, deletion), every container's name, image, ports and resources (restartPolicy
// included, for sidecars), the spec's placement fields, volumes (claims, ephemeral volumes, sources other
// than projected ones) and the pod's phase and conditions.
//
// A trimmed object must never be written back (Update would erase what was dropped): callers patch.
func TrimPod(p *corev1.Pod) {
	p.ManagedFields = nil
	delete(p.Annotations, lastApplied)
	for i := range p.Spec.InitContainers {
		trimContainer(&p.Spec.InitContainers[i])
	}
	for i := range p.Spec.Containers {
		trimContainer(&p.Spec.Containers[i])
	}
	p.Spec.EphemeralContainers = nil
	for i := range p.Spec.Volumes {
		if pr := p.Spec.Volumes[i].Projected; pr != nil {
			pr.Sources = nil
		}
	}
	p.Status.ContainerStatuses = nil
	p.Status.InitContainerStatuses = nil
	p.Status.EphemeralContainerStatuses = nil
	p.Status.ResourceClaimStatuses = nil
	for i := range p.Status.Conditions {
		p.Status.Conditions[i].Message = trimMessage(p.Status.Conditions[i].Message)
	}
}

func trimContainer(c *corev1.Container) {
	c.Env, c.EnvFrom = nil, nil
	c.Command, c.Args = nil, nil
	c.LivenessProbe, c.ReadinessProbe, c.StartupProbe = nil, nil, nil
	c.Lifecycle = nil
	c.VolumeMounts = nil
	c.SecurityContext = nil
	c.TerminationMessagePath = ""
}

// TrimNode drops what no decision of Nodewright reads: managedFields, kubectl's last-applied copy, the
// images the node holds, the volumes in use and attached, and the kubelet's endpoints.
func TrimNode(n *corev1.Node) {
	n.ManagedFields = nil
	delete(n.Annotations, lastApplied)
	n.Status.Images = nil
	n.Status.VolumesInUse = nil
	n.Status.VolumesAttached = nil
	n.Status.DaemonEndpoints = corev1.NodeDaemonEndpoints{}
	for i := range n.Status.Conditions {
		n.Status.Conditions[i].Message = trimMessage(n.Status.Conditions[i].Message)
	}
}

// maxConditionMessage bounds a kept condition message: kube-scheduler's "0/5000 nodes are available: …"
// grows with the cluster, and explanations quote at most its start.
const maxConditionMessage = 256

func trimMessage(m string) string {
	if len(m) <= maxConditionMessage {
		return m
	}
	return m[:maxConditionMessage]
}
