package apis

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"

	corev1 "k8s.io/api/core/v1"
)

// Hash versions. Bump one when a change to the hashed fields, their defaults or their encoding would change
// the hash of an unchanged object, so that stored hashes of the old version are recomputed rather than read
// as drift.
const (
	NodePoolHashVersion     = "v1"
	EC2NodeClassHashVersion = "v1"
)

// NodePoolTemplateHash is the static-drift hash of a NodePool: it covers spec.template's labels,
// annotations, taints, startup taints, nodeClassRef, expireAfter and terminationGracePeriod, and not its
// requirements (requirement drift is computed against each node's labels) nor anything outside the template
// (disruption, budgets, limits, weight). The object is defaulted first, on a copy, so an explicit default
// and an omitted field hash alike; taints are a set; durations compare by value ("60m" equals "1h").
// Store it with NodePoolHashVersion.
func NodePoolTemplateHash(np *NodePool) string {
	c := np.DeepCopy()
	c.SetDefaults()
	t := c.Spec.Template
	in := struct {
		Labels                 map[string]string   `json:"labels,omitempty"`
		Annotations            map[string]string   `json:"annotations,omitempty"`
		Taints                 []string            `json:"taints,omitempty"`
		StartupTaints          []string            `json:"startupTaints,omitempty"`
		NodeClassRef           *NodeClassReference `json:"nodeClassRef,omitempty"`
		ExpireAfter            string              `json:"expireAfter,omitempty"`
		TerminationGracePeriod string              `json:"terminationGracePeriod,omitempty"`
	}{
		Labels:        t.ObjectMeta.Labels,
		Annotations:   t.ObjectMeta.Annotations,
		Taints:        taintSet(t.Spec.Taints),
		StartupTaints: taintSet(t.Spec.StartupTaints),
		NodeClassRef:  t.Spec.NodeClassRef,
		ExpireAfter:   t.Spec.ExpireAfter.canonical(),
	}
	if t.Spec.TerminationGracePeriod != nil {
		in.TerminationGracePeriod = t.Spec.TerminationGracePeriod.canonical()
	}
	return digest(in)
}

// EC2NodeClassHash is the static-drift hash of an EC2NodeClass, without a cluster CA bundle; see
// EC2NodeClassHashWithCABundle.
func EC2NodeClassHash(nc *EC2NodeClass) string { return EC2NodeClassHashWithCABundle(nc, "") }

// EC2NodeClassHashWithCABundle is the static-drift hash of an EC2NodeClass: it covers every field that is
// fixed into a launch template (user data, role or instance profile, tags, kubelet, block devices,
// instance store policy, network interfaces, monitoring, metadata options, connection tracking, context,
// CPU options, public IP, placement group) and the resolved AMI family, plus the cluster's CA bundle. It
// leaves out what is resolved against AWS and drifts dynamically: subnet, security group, capacity
// reservation and AMI selectors, and ipPrefixCount. The object is defaulted first, on a copy; lists of
// block devices and interfaces are sets; a false or zero value hashes like an absent one, as in Karpenter.
// Store it with EC2NodeClassHashVersion.
func EC2NodeClassHashWithCABundle(nc *EC2NodeClass, caBundle string) string {
	c := nc.DeepCopy()
	c.SetDefaults()
	s := c.Spec
	in := struct {
		PlacementGroupName       string            `json:"placementGroupName,omitempty"`
		PlacementGroupID         string            `json:"placementGroupID,omitempty"`
		AssociatePublicIPAddress bool              `json:"associatePublicIPAddress,omitempty"`
		AMIFamily                string            `json:"amiFamily"`
		UserData                 string            `json:"userData,omitempty"`
		Role                     string            `json:"role,omitempty"`
		InstanceProfile          string            `json:"instanceProfile,omitempty"`
		Tags                     map[string]string `json:"tags,omitempty"`
		Kubelet                  string            `json:"kubelet,omitempty"`
		BlockDeviceMappings      []string          `json:"blockDeviceMappings,omitempty"`
		InstanceStorePolicy      string            `json:"instanceStorePolicy,omitempty"`
		NetworkInterfaces        []string          `json:"networkInterfaces,omitempty"`
		DetailedMonitoring       bool              `json:"detailedMonitoring,omitempty"`
		MetadataOptions          *MetadataOptions  `json:"metadataOptions,omitempty"`
		ConnectionTracking       string            `json:"connectionTracking,omitempty"`
		Context                  string            `json:"context,omitempty"`
		NestedVirtualization     string            `json:"nestedVirtualization,omitempty"`
		CABundle                 string            `json:"caBundle,omitempty"`
	}{
		AssociatePublicIPAddress: deref(s.AssociatePublicIPAddress),
		AMIFamily:                c.AMIFamily(),
		UserData:                 deref(s.UserData),
		Role:                     s.Role,
		InstanceProfile:          deref(s.InstanceProfile),
		Tags:                     s.Tags,
		Kubelet:                  canonicalKubelet(s.Kubelet),
		BlockDeviceMappings:      blockDeviceSet(s.BlockDeviceMappings),
		InstanceStorePolicy:      string(deref(s.InstanceStorePolicy)),
		NetworkInterfaces:        interfaceSet(s.NetworkInterfaces),
		DetailedMonitoring:       deref(s.DetailedMonitoring),
		MetadataOptions:          s.MetadataOptions,
		Context:                  deref(s.Context),
		CABundle:                 caBundle,
	}
	if pg := s.PlacementGroupSelector; pg != nil {
		in.PlacementGroupName, in.PlacementGroupID = deref(pg.Name), deref(pg.ID)
	}
	if ct := s.ConnectionTracking; ct != nil && (ct.TCPEstablishedTimeout != nil || ct.UDPStreamTimeout != nil || ct.UDPTimeout != nil) {
		in.ConnectionTracking = encode(ct)
	}
	if s.CPUOptions != nil {
		in.NestedVirtualization = deref(s.CPUOptions.NestedVirtualization)
	}
	return digest(in)
}

// digest is the first 64 bits of the SHA-256 of v's JSON, in hex. encoding/json writes map keys sorted,
// so maps hash independently of order.
func digest(v any) string {
	sum := sha256.Sum256([]byte(encode(v)))
	return hex.EncodeToString(sum[:8])
}

func encode(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		panic("apis: encoding hash input: " + err.Error())
	}
	return string(data)
}

// taintSet encodes taints (key, value, effect; timeAdded is not configuration) as a sorted set.
func taintSet(taints []corev1.Taint) []string {
	out := make([]string, 0, len(taints))
	for _, t := range taints {
		out = append(out, encode([3]string{t.Key, t.Value, string(t.Effect)}))
	}
	return sortedUnique(out)
}

func blockDeviceSet(bdms []*BlockDeviceMapping) []string {
	out := make([]string, 0, len(bdms))
	for _, b := range bdms {
		if b == nil {
			continue
		}
		c := *b
		if c.EBS != nil {
			ebs := *c.EBS
			if q, ok := ebs.VolumeSizeQuantity(); ok {
				ebs.VolumeSize = ptr(q.String())
			}
			c.EBS = &ebs
		}
		out = append(out, encode(c))
	}
	return sortedUnique(out)
}

func interfaceSet(nis []*NetworkInterface) []string {
	out := make([]string, 0, len(nis))
	for _, ni := range nis {
		if ni != nil {
			out = append(out, encode(ni))
		}
	}
	return sortedUnique(out)
}

// canonicalKubelet re-encodes each value so that formatting and key order do not matter.
func canonicalKubelet(kc KubeletConfiguration) string {
	if len(kc) == 0 {
		return ""
	}
	m := make(map[string]any, len(kc))
	for k, raw := range kc {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			v = string(raw)
		}
		m[k] = v
	}
	return encode(m)
}

func sortedUnique(s []string) []string {
	sort.Strings(s)
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
