package scheduling

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
)

// EBSCSIDriver is the EBS CSI driver's name, under which in-tree EBS volumes (migrated to it by
// Kubernetes) count against a node's limit.
const EBSCSIDriver = "ebs.csi.aws.com"

// inTreeEBS is the in-tree EBS plugin's provisioner name.
const inTreeEBS = "kubernetes.io/aws-ebs"

// attachment is one volume a pod attaches to its node through a CSI driver. It is identified by its
// claim (namespace/name), as Karpenter does: pods that share a claim share the attachment.
type attachment struct {
	driver, claim string
}

// driverLimit is how many volumes a node's CSINode lets one driver attach.
type driverLimit struct {
	driver string
	count  int
}

// csiLimits reads the CSINodes' allocatable volume counts by node name. A driver without a count,
// and a node without a CSINode, have no limit; nil when no node has one, so a cluster without
// counts resolves no attachment at all.
func csiLimits(nodes []*storagev1.CSINode) map[string][]driverLimit {
	var out map[string][]driverLimit
	for _, n := range nodes {
		var limits []driverLimit
		for _, d := range n.Spec.Drivers {
			if d.Allocatable != nil && d.Allocatable.Count != nil {
				limits = append(limits, driverLimit{driver: d.Name, count: int(*d.Allocatable.Count)})
			}
		}
		if len(limits) == 0 {
			continue
		}
		if out == nil {
			out = map[string][]driverLimit{}
		}
		out[n.Name] = limits
	}
	return out
}

// attachments appends to out the pod's claim volumes (persistent and generic ephemeral) with the
// CSI driver that attaches each, once per claim. A claim whose driver cannot be told (claim, volume
// and class missing, or a volume of neither CSI nor in-tree EBS without a class) is left out: it
// counts against no limit, and volume topology reports what is missing.
func (v *volumeIndex) attachments(pod *corev1.Pod, out []attachment) []attachment {
	start := len(out)
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		var claim string
		var class *string
		switch {
		case vol.PersistentVolumeClaim != nil:
			claim = vol.PersistentVolumeClaim.ClaimName
		case vol.Ephemeral != nil:
			claim = pod.Name + "-" + vol.Name
			if t := vol.Ephemeral.VolumeClaimTemplate; t != nil {
				class = t.Spec.StorageClassName
			}
		default:
			continue
		}
		id := pod.Namespace + "/" + claim
		volume := ""
		if pvc, ok := v.claims[id]; ok {
			volume, class = pvc.Spec.VolumeName, pvc.Spec.StorageClassName
		}
		a := attachment{driver: v.driverOf(volume, class), claim: id}
		if a.driver != "" && !slices.Contains(out[start:], a) {
			out = append(out, a)
		}
	}
	return out
}

// driverOf names the CSI driver of a claim's volume: the bound volume's CSI driver (EBS for an
// in-tree EBS volume), else its class's provisioner, the in-tree EBS one translated. A nil class is
// the cluster's default class.
func (v *volumeIndex) driverOf(volume string, class *string) string {
	if pv, ok := v.volumes[volume]; ok && volume != "" {
		switch {
		case pv.Spec.CSI != nil && pv.Spec.CSI.Driver != "":
			return pv.Spec.CSI.Driver
		case pv.Spec.AWSElasticBlockStore != nil:
			return EBSCSIDriver
		}
	}
	name := v.defaultClass
	if class != nil {
		name = *class
	}
	sc, ok := v.classes[name]
	if !ok || name == "" {
		return ""
	}
	if sc.Provisioner == inTreeEBS {
		return EBSCSIDriver
	}
	return sc.Provisioner
}

// classAttachments returns the attachments of each pod of the class that has any, nil when none
// has.
func (v *volumeIndex) classAttachments(pods []*corev1.Pod) map[*corev1.Pod][]attachment {
	var out map[*corev1.Pod][]attachment
	for _, p := range pods {
		if len(p.Spec.Volumes) == 0 {
			continue
		}
		if as := v.attachments(p, nil); len(as) > 0 {
			if out == nil {
				out = map[*corev1.Pod][]attachment{}
			}
			out[p] = as
		}
	}
	return out
}

// attach records the attachments of the drivers the node limits that it does not have yet.
func (s *nodeSlot) attach(as []attachment) {
	for _, a := range as {
		if s.limits(a.driver) && !slices.Contains(s.attached, a) {
			s.attached = append(s.attached, a)
		}
	}
}

// limits reports whether the node's CSINode limits the driver.
func (s *nodeSlot) limits(driver string) bool {
	for _, l := range s.attachLimits {
		if l.driver == driver {
			return true
		}
	}
	return false
}

// attachFits reports whether the node can attach the volumes as well: every limited driver's
// attachments, with those of the volumes the node does not have yet, stay within its count. As in
// kube-scheduler, a pod that adds no attachment is never refused.
func (s *nodeSlot) attachFits(as []attachment) bool {
	_, _, ok := s.attachRoom(as)
	return ok
}

// attachRoom is attachFits with the limit exceeded and the volumes attached for it.
func (s *nodeSlot) attachRoom(as []attachment) (driverLimit, int, bool) {
	if len(s.attachLimits) == 0 || len(as) == 0 {
		return driverLimit{}, 0, true
	}
	for _, l := range s.attachLimits {
		added := 0
		for _, a := range as {
			if a.driver == l.driver && !slices.Contains(s.attached, a) {
				added++
			}
		}
		if added == 0 {
			continue
		}
		n := 0
		for _, a := range s.attached {
			if a.driver == l.driver {
				n++
			}
		}
		if n+added > l.count {
			return l, n, false
		}
	}
	return driverLimit{}, 0, true
}

// attachRefusal words why the node cannot attach the volumes.
func (s *nodeSlot) attachRefusal(as []attachment) string {
	l, n, _ := s.attachRoom(as)
	return fmt.Sprintf("node %s: CSI driver %s allows %d volumes, %d attached", s.name, l.driver, l.count, n)
}
