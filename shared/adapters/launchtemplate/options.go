package launchtemplate

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/nodewright/nodewright/shared/core/apis"
)

// Cluster is what a node needs to find and trust its cluster's API server.
type Cluster struct {
	Name     string
	Endpoint string // https URL of the API server
	// CABundle is the cluster certificate authority as EKS DescribeCluster returns it: base64 of the PEM.
	CABundle string
	// IPFamily is the cluster's IP family, IPv4 or IPv6 (EKS kubernetesNetworkConfig.ipFamily); empty
	// means the family of ServiceCIDR, else of DNSIP, else IPv4.
	IPFamily string
	// ServiceCIDR is the Kubernetes service address range in the cluster's IP family (nodeadm's
	// cluster.cidr, bootstrap.sh's --service-ipv6-cidr on IPv6); required for AL2023.
	ServiceCIDR string
	// DNSIP is the cluster DNS service address, used when the kubelet configuration sets no clusterDNS.
	DNSIP string
}

// The cluster IP families, as EKS names them.
const (
	IPv4 = "ipv4"
	IPv6 = "ipv6"
)

// family is c's IP family: IPFamily, else the family of ServiceCIDR or DNSIP, else IPv4.
func (c Cluster) family() string {
	if c.IPFamily != "" {
		return c.IPFamily
	}
	if _, n, err := net.ParseCIDR(c.ServiceCIDR); err == nil {
		return familyOf(n.IP)
	}
	if ip := net.ParseIP(c.DNSIP); ip != nil {
		return familyOf(ip)
	}
	return IPv4
}

// IPv6 reports whether c is an IPv6 cluster.
func (c Cluster) IPv6() bool { return c.family() == IPv6 }

func familyOf(ip net.IP) string {
	if ip.To4() != nil {
		return IPv4
	}
	return IPv6
}

// Options are the inputs of a node's user data. They are plain values: no clients.
type Options struct {
	// Family is an AMI family (apis.AMIFamilyAL2023, …).
	Family  string
	Cluster Cluster
	// Labels are the labels the node registers with: nodepool, nodeclass, capacity type, the NodePool
	// template labels and the custom labels a claim's pods narrowed its requirements to (team=a). The
	// template's name hashes them, so each distinct label set gets its own template. Labels in domains
	// the kubelet may not set on itself (kubernetes.io, k8s.io and their sub-domains, as Kubernetes'
	// NodeRestriction admission enforces) are left out, as Karpenter does; the lifecycle code sets them
	// on the Node.
	Labels map[string]string
	// Taints and StartupTaints are the NodePool template's; karpenter.sh/unregistered:NoExecute is
	// always added.
	Taints        []corev1.Taint
	StartupTaints []corev1.Taint
	// KubeletConfig is the EC2NodeClass spec.kubelet.
	KubeletConfig apis.KubeletConfiguration
	// MaxPods, when set, is the pod limit written into the kubelet configuration in place of
	// spec.kubelet.maxPods: the count resolved for the instance types the template serves.
	MaxPods *int32
	// UserData is the EC2NodeClass spec.userData, merged with what Nodewright writes.
	UserData string
	// InstanceStorePolicy is the EC2NodeClass spec.instanceStorePolicy: RAID0 puts the instance-store
	// NVMe disks in one array used for the kubelet's and containerd's storage.
	InstanceStorePolicy *apis.InstanceStorePolicy
	// CapacityReservationID, when set, makes the template launch into that capacity reservation only
	// (targeted); CapacityReservationType is its type, default or capacity-block;
	// CapacityReservationInterruptible marks an interruptible reservation.
	CapacityReservationID            string
	CapacityReservationType          string
	CapacityReservationInterruptible bool
	// EFAInterfaces, when positive, gives the node that many EFA network interfaces, one per network
	// card (see efaInterfaces): the instance type's EFA count, set for claims whose pods request
	// vpc.amazonaws.com/efa, so the device plugin has the interfaces it advertises.
	EFAInterfaces int32
}

func (o Options) raid0() bool {
	return o.InstanceStorePolicy != nil && *o.InstanceStorePolicy == apis.InstanceStorePolicyRAID0
}

// kubelet is the kubelet configuration to write: spec.kubelet with maxPods and clusterDNS resolved.
func (o Options) kubelet() (apis.Kubelet, error) {
	k, err := o.KubeletConfig.Parse()
	if err != nil {
		return k, fmt.Errorf("parsing kubelet configuration: %w", err)
	}
	if o.MaxPods != nil {
		k.MaxPods = o.MaxPods
	}
	if len(k.ClusterDNS) == 0 && o.Cluster.DNSIP != "" {
		k.ClusterDNS = []string{o.Cluster.DNSIP}
	}
	return k, nil
}

// rawKubelet is spec.kubelet as written (every field passes through, as nodeadm accepts any kubelet field)
// with maxPods and clusterDNS resolved like kubelet().
func (o Options) rawKubelet() (map[string]json.RawMessage, error) {
	k, err := o.kubelet()
	if err != nil {
		return nil, err
	}
	raw := make(map[string]json.RawMessage, len(o.KubeletConfig)+2)
	for key, v := range o.KubeletConfig {
		raw[key] = v
	}
	if k.MaxPods != nil {
		raw[apis.KubeletMaxPods] = json.RawMessage(strconv.Itoa(int(*k.MaxPods)))
	}
	if len(k.ClusterDNS) > 0 {
		if raw[apis.KubeletClusterDNS], err = json.Marshal(k.ClusterDNS); err != nil {
			return nil, fmt.Errorf("encoding clusterDNS: %w", err)
		}
	}
	return raw, nil
}

// registerTaints are the taints the node registers with: the NodePool's taints, then its startup taints,
// then karpenter.sh/unregistered:NoExecute unless already present; duplicates (same key and effect) keep
// their first occurrence.
func (o Options) registerTaints() []corev1.Taint {
	var out []corev1.Taint
	seen := map[string]bool{}
	all := slices.Concat(o.Taints, o.StartupTaints, []corev1.Taint{apis.UnregisteredNoExecuteTaint})
	for _, t := range all {
		id := t.Key + ":" + string(t.Effect)
		if seen[id] {
			continue
		}
		seen[id] = true
		out = append(out, corev1.Taint{Key: t.Key, Value: t.Value, Effect: t.Effect})
	}
	return out
}

// nodeLabels are the labels the kubelet may set on itself, sorted by key.
func (o Options) nodeLabels() []label {
	var out []label
	for k, v := range o.Labels {
		if !selfSettable(k) {
			continue
		}
		out = append(out, label{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}

type label struct{ key, value string }

// selfSettable reports whether a kubelet may register its node with the label: keys in kubernetes.io,
// k8s.io and their sub-domains are refused by the NodeRestriction admission plugin (bar a few exceptions
// Karpenter does not rely on either).
func selfSettable(key string) bool {
	domain := apis.LabelDomain(key)
	for _, restricted := range []string{"kubernetes.io", "k8s.io"} {
		if domain == restricted || strings.HasSuffix(domain, "."+restricted) {
			return false
		}
	}
	return true
}

// labelsFlag is the kubelet flag that sets the node's labels, or "" when there are none.
func (o Options) labelsFlag() string {
	labels := o.nodeLabels()
	if len(labels) == 0 {
		return ""
	}
	parts := make([]string, len(labels))
	for i, l := range labels {
		parts[i] = l.key + "=" + l.value
	}
	return "--node-labels=" + strings.Join(parts, ",")
}

// taintsFlag is the kubelet flag that registers the node with its taints.
func (o Options) taintsFlag() string {
	taints := o.registerTaints()
	parts := make([]string, len(taints))
	for i, t := range taints {
		parts[i] = t.ToString()
	}
	return "--register-with-taints=" + strings.Join(parts, ",")
}

// validate checks what user data embeds, so that no value can break out of the YAML, TOML or shell it is
// written into: qualified label keys and valid values, valid taints, plain cluster fields.
// AL2023 (nodeadm) also needs the certificate authority and the service CIDR: needAll.
func (o Options) validate(needAll bool) error {
	c := o.Cluster
	if c.Name == "" || c.Endpoint == "" {
		return fmt.Errorf("cluster name and endpoint are required")
	}
	if needAll && c.CABundle == "" {
		return fmt.Errorf("cluster CA bundle is required")
	}
	for what, v := range map[string]string{"name": c.Name, "endpoint": c.Endpoint, "CA bundle": c.CABundle,
		"service CIDR": c.ServiceCIDR, "DNS IP": c.DNSIP} {
		if strings.ContainsAny(v, "'\"\\ \t\r\n$`") {
			return fmt.Errorf("cluster %s %q contains quotes, spaces or shell characters", what, v)
		}
	}
	if c.CABundle != "" {
		if _, err := base64.StdEncoding.DecodeString(c.CABundle); err != nil {
			return fmt.Errorf("cluster CA bundle is not base64: %w", err)
		}
	}
	if c.IPFamily != "" && c.IPFamily != IPv4 && c.IPFamily != IPv6 {
		return fmt.Errorf("cluster IP family %q is neither %s nor %s", c.IPFamily, IPv4, IPv6)
	}
	if needAll || c.ServiceCIDR != "" {
		_, n, err := net.ParseCIDR(c.ServiceCIDR)
		if err != nil {
			return fmt.Errorf("cluster service CIDR %q: %w", c.ServiceCIDR, err)
		}
		if familyOf(n.IP) != c.family() {
			return fmt.Errorf("cluster service CIDR %q is not an %s range", c.ServiceCIDR, c.family())
		}
	}
	if c.DNSIP != "" {
		ip := net.ParseIP(c.DNSIP)
		if ip == nil {
			return fmt.Errorf("cluster DNS IP %q is not an IP address", c.DNSIP)
		}
		if familyOf(ip) != c.family() {
			return fmt.Errorf("cluster DNS IP %q is not an %s address", c.DNSIP, c.family())
		}
	}
	for k, v := range o.Labels {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return fmt.Errorf("label key %q: %s", k, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return fmt.Errorf("label %s value %q: %s", k, v, strings.Join(errs, "; "))
		}
	}
	for _, t := range slices.Concat(o.Taints, o.StartupTaints) {
		if errs := validation.IsQualifiedName(t.Key); len(errs) > 0 {
			return fmt.Errorf("taint key %q: %s", t.Key, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(t.Value); len(errs) > 0 {
			return fmt.Errorf("taint %s value %q: %s", t.Key, t.Value, strings.Join(errs, "; "))
		}
		switch t.Effect {
		case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			return fmt.Errorf("taint %s has effect %q, want NoSchedule, PreferNoSchedule or NoExecute", t.Key, t.Effect)
		}
	}
	return nil
}
