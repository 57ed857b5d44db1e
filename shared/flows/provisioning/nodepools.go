package provisioning

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// NodePoolsFrom converts defaulted, valid NodePools into the scheduler's view, sorted by name. Each pool
// keeps its weight (0 when unset), template annotations, template labels plus the
// karpenter.k8s.aws/ec2nodeclass label naming its nodeClassRef, taints, startup taints, requirements
// with their operators and minValues, and limits.
// Static NodePools (spec.replicas set) are left out: they keep a fixed node count and never provision
// for pending pods. An error names the NodePool and the requirement the scheduler cannot parse.
func NodePoolsFrom(objs apis.Objects) ([]scheduling.NodePool, error) {
	var out []scheduling.NodePool
	for _, np := range objs.NodePools {
		if np == nil || np.IsStatic() {
			continue
		}
		p, err := nodePoolFrom(np)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b scheduling.NodePool) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}

func nodePoolFrom(np *apis.NodePool) (scheduling.NodePool, error) {
	tmpl := np.Spec.Template
	p := scheduling.NodePool{
		Name:          np.Name,
		Taints:        slices.Clone(tmpl.Spec.Taints),
		StartupTaints: slices.Clone(tmpl.Spec.StartupTaints),
	}
	if np.Spec.Weight != nil {
		p.Weight = *np.Spec.Weight
	}
	if len(tmpl.ObjectMeta.Labels) > 0 || tmpl.Spec.NodeClassRef != nil {
		p.Labels = map[string]string{}
	}
	for k, v := range tmpl.ObjectMeta.Labels {
		p.Labels[k] = v
	}
	if ref := tmpl.Spec.NodeClassRef; ref != nil && ref.Name != "" {
		p.Labels[scheduling.LabelEC2NodeClass] = ref.Name
	}
	if len(tmpl.ObjectMeta.Annotations) > 0 {
		p.Annotations = maps.Clone(tmpl.ObjectMeta.Annotations)
	}
	for i, r := range tmpl.Spec.Requirements {
		spec := scheduling.NodeSelectorRequirement{
			Key: r.Key, Operator: scheduling.Operator(r.Operator), Values: slices.Clone(r.Values),
		}
		if r.MinValues != nil {
			mv := *r.MinValues
			spec.MinValues = &mv
		}
		if _, err := scheduling.RequirementsFromSpecs([]scheduling.NodeSelectorRequirement{spec}); err != nil {
			return scheduling.NodePool{}, fmt.Errorf("NodePool %s: spec.template.spec.requirements[%d]: %w", np.Name, i, err)
		}
		p.Requirements = append(p.Requirements, spec)
	}
	if len(np.Spec.Limits) > 0 {
		p.Limits = corev1.ResourceList{}
		for k, v := range np.Spec.Limits {
			p.Limits[k] = v.DeepCopy()
		}
	}
	return p, nil
}

// NodeClassRefName returns the name of the EC2NodeClass a NodePool's nodes use, or "".
func NodeClassRefName(p scheduling.NodePool) string { return p.Labels[scheduling.LabelEC2NodeClass] }

// rootDeviceByFamily is the device each AMI family mounts as the kubelet's root (ephemeral storage)
// when no block device mapping is marked rootVolume.
var rootDeviceByFamily = map[string]string{
	apis.AMIFamilyAL2:          "/dev/xvda",
	apis.AMIFamilyAL2023:       "/dev/xvda",
	apis.AMIFamilyBottlerocket: "/dev/xvdb",
	apis.AMIFamilyWindows2019:  "/dev/sda1",
	apis.AMIFamilyWindows2022:  "/dev/sda1",
	apis.AMIFamilyWindows2025:  "/dev/sda1",
}

// NodeClassConfigFrom reads what an EC2NodeClass contributes to the allocatable model: the AMI family
// (from amiFamily or the alias; Custom otherwise), the kubelet's maxPods, podsPerCore, kubeReserved,
// systemReserved and evictionHard, the root volume size, and whether the instance store is striped as
// RAID0 for ephemeral storage. The root volume is the mapping marked rootVolume; failing that, the
// family's root device (/dev/xvda, /dev/xvdb on Bottlerocket, /dev/sda1 on Windows), or for Custom the
// last mapping; failing that the scheduler's default. Reserved "pid" amounts do not affect allocatable
// and are ignored.
func NodeClassConfigFrom(nc *apis.EC2NodeClass) (scheduling.NodeClassConfig, error) {
	var cfg scheduling.NodeClassConfig
	if nc == nil {
		return cfg, fmt.Errorf("no EC2NodeClass")
	}
	cfg.AMIFamily = nc.AMIFamily()
	kubelet, err := nc.Spec.Kubelet.Parse()
	if err != nil {
		return cfg, fmt.Errorf("EC2NodeClass %s: spec.kubelet: %w", nc.Name, err)
	}
	cfg.Kubelet.MaxPods, cfg.Kubelet.PodsPerCore = kubelet.MaxPods, kubelet.PodsPerCore
	if cfg.Kubelet.KubeReserved, err = reservedList(kubelet.KubeReserved); err != nil {
		return cfg, fmt.Errorf("EC2NodeClass %s: spec.kubelet.kubeReserved: %w", nc.Name, err)
	}
	if cfg.Kubelet.SystemReserved, err = reservedList(kubelet.SystemReserved); err != nil {
		return cfg, fmt.Errorf("EC2NodeClass %s: spec.kubelet.systemReserved: %w", nc.Name, err)
	}
	if len(kubelet.EvictionHard) > 0 {
		cfg.Kubelet.EvictionHard = map[string]string{}
		for k, v := range kubelet.EvictionHard {
			cfg.Kubelet.EvictionHard[k] = v
		}
	}
	if size := rootVolumeSize(nc, cfg.AMIFamily); size != nil {
		q, err := resource.ParseQuantity(*size)
		if err != nil {
			return cfg, fmt.Errorf("EC2NodeClass %s: root volume size %q: %w", nc.Name, *size, err)
		}
		cfg.RootVolumeBytes = q.Value()
	}
	cfg.InstanceStoreRAID0 = nc.Spec.InstanceStorePolicy != nil && *nc.Spec.InstanceStorePolicy == apis.InstanceStorePolicyRAID0
	return cfg, nil
}

// rootVolumeSize returns the volumeSize of the mapping that holds the kubelet's root, or nil.
func rootVolumeSize(nc *apis.EC2NodeClass, family string) *string {
	bdms := nc.Spec.BlockDeviceMappings
	size := func(b *apis.BlockDeviceMapping) *string {
		if b == nil || b.EBS == nil {
			return nil
		}
		return b.EBS.VolumeSize
	}
	for _, b := range bdms {
		if b != nil && b.RootVolume {
			return size(b)
		}
	}
	if len(bdms) == 0 {
		return nil
	}
	if family == apis.AMIFamilyCustom {
		return size(bdms[len(bdms)-1])
	}
	device := rootDeviceByFamily[family]
	for _, b := range bdms {
		if b != nil && b.DeviceName != nil && *b.DeviceName == device {
			return size(b)
		}
	}
	return nil
}

// reservedList parses a kubeReserved or systemReserved map, leaving out "pid".
func reservedList(m map[string]string) (corev1.ResourceList, error) {
	var out corev1.ResourceList
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if k == "pid" {
			continue
		}
		q, err := resource.ParseQuantity(m[k])
		if err != nil {
			return nil, fmt.Errorf("%s: %q is not a quantity", k, m[k])
		}
		if out == nil {
			out = corev1.ResourceList{}
		}
		out[corev1.ResourceName(k)] = q
	}
	return out, nil
}
