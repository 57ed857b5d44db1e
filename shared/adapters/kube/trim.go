package kube

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// lastApplied is kubectl's copy of the whole applied object, often the largest annotation a pod has.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// TrimPod drops what no decision of Nodewright reads, so a cluster of 150,000 pods fits a function's
// memory: managedFields, kubectl's last-applied copy, each container's environment, command, probes,
// lifecycle hooks, mounts, security context and limits (folded into requests first, see foldLimits), the
// ports that bind no host port, ephemeral containers, the volumes that do not constrain placement (all
// but claims, ephemeral and CSI volumes), every container status, the pod's addresses and the conditions
// other than PodScheduled, Ready and DisruptionTarget. What scheduling, disruption and draining read
// stays: metadata (labels, annotations, owners, deletion), every container's name, image, host ports and
// requests (restartPolicy included, for sidecars), the spec's placement fields, the phase and those
// conditions.
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
	p.Spec.Volumes = slices.DeleteFunc(p.Spec.Volumes, func(v corev1.Volume) bool {
		return v.PersistentVolumeClaim == nil && v.Ephemeral == nil && v.CSI == nil
	})
	if len(p.Spec.Volumes) == 0 {
		p.Spec.Volumes = nil
	}
	p.Status.ContainerStatuses = nil
	p.Status.InitContainerStatuses = nil
	p.Status.EphemeralContainerStatuses = nil
	p.Status.ResourceClaimStatuses = nil
	p.Status.PodIP, p.Status.PodIPs, p.Status.HostIP, p.Status.HostIPs = "", nil, "", nil
	p.Status.Conditions = slices.DeleteFunc(p.Status.Conditions, func(c corev1.PodCondition) bool {
		return c.Type != corev1.PodScheduled && c.Type != corev1.PodReady && c.Type != corev1.DisruptionTarget
	})
	for i := range p.Status.Conditions {
		p.Status.Conditions[i].Message = trimMessage(p.Status.Conditions[i].Message)
	}
}

func trimContainer(c *corev1.Container) {
	foldLimits(c)
	c.Env, c.EnvFrom = nil, nil
	c.Command, c.Args = nil, nil
	c.LivenessProbe, c.ReadinessProbe, c.StartupProbe = nil, nil, nil
	c.Lifecycle = nil
	c.VolumeMounts = nil
	c.SecurityContext = nil
	c.TerminationMessagePath = ""
	c.Ports = slices.DeleteFunc(c.Ports, func(p corev1.ContainerPort) bool { return p.HostPort == 0 })
	if len(c.Ports) == 0 {
		c.Ports = nil
	}
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

// foldLimits moves limits into requests where a request is missing (what the API server's defaulting
// does for the pods it admits, and what a request is read as anyway), then drops the limits, which no
// decision reads otherwise.
func foldLimits(c *corev1.Container) {
	if len(c.Resources.Limits) == 0 {
		return
	}
	for name, q := range c.Resources.Limits {
		if _, ok := c.Resources.Requests[name]; !ok {
			if c.Resources.Requests == nil {
				c.Resources.Requests = corev1.ResourceList{}
			}
			c.Resources.Requests[name] = q
		}
	}
	c.Resources.Limits = nil
}
