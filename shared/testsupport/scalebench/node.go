package scalebench

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Instance is the EC2 instance behind a generated Node, as moto launched it.
type Instance struct {
	ID, PrivateIP, PrivateDNS string
}

// ProviderID is the Node's spec.providerID for an instance in zone.
func (i Instance) ProviderID(zone string) string { return "aws:///" + zone + "/" + i.ID }

// Finalizer Nodewright's Nodes carry.
const nodeFinalizer = "nodewright.sh/termination"

// NodeLabels are the labels of node n: the kubelet's, the cloud provider's, and the ones Karpenter (and
// Nodewright's registration) set, instance labels included. The claim records the same labels.
func (p *Plan) NodeLabels(n int, inst Instance) map[string]string {
	return nodeLabels(p.Nodes[n], inst)
}

func nodeLabels(np NodePlan, inst Instance) map[string]string {
	s := np.Shape
	region := np.Zone[:len(np.Zone)-1]
	return map[string]string{
		"beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/instance-type": s.Name, "beta.kubernetes.io/os": "linux",
		"failure-domain.beta.kubernetes.io/region": region, "failure-domain.beta.kubernetes.io/zone": np.Zone,
		"k8s.io/cloud-provider-aws":      "a4c1e5e2f53bd36a4e1d6a3b8f6b1d52",
		"karpenter.k8s.aws/ec2nodeclass": "default", "karpenter.k8s.aws/instance-category": s.category(),
		"karpenter.k8s.aws/instance-cpu": strconv.Itoa(s.VCPU), "karpenter.k8s.aws/instance-cpu-manufacturer": "intel",
		"karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz": "3100", "karpenter.k8s.aws/instance-ebs-bandwidth": "4750",
		"karpenter.k8s.aws/instance-encryption-in-transit-supported": "true", "karpenter.k8s.aws/instance-family": s.family(),
		"karpenter.k8s.aws/instance-generation": s.generation(), "karpenter.k8s.aws/instance-hypervisor": "nitro",
		"karpenter.k8s.aws/instance-memory": strconv.FormatInt(s.MemoryMiB, 10), "karpenter.k8s.aws/instance-network-bandwidth": strconv.Itoa(s.NetworkMbps),
		"karpenter.k8s.aws/instance-size": s.size(), "karpenter.sh/capacity-type": np.CapacityType,
		"karpenter.sh/initialized": "true", "karpenter.sh/nodepool": np.NodePool, "karpenter.sh/registered": "true",
		"kubernetes.io/arch": "amd64", "kubernetes.io/hostname": inst.PrivateDNS, "kubernetes.io/os": "linux",
		"node.kubernetes.io/instance-type": s.Name, "topology.ebs.csi.aws.com/zone": np.Zone,
		"topology.k8s.aws/zone-id": zoneIDs[np.Zone], "topology.kubernetes.io/region": region, "topology.kubernetes.io/zone": np.Zone,
		"workload-class": np.NodePool,
	}
}

// Node renders node n on inst: Ready, with the capacity of its type, ~50 images, and the managedFields
// of the kubelet, the cloud controller, the VPC resource controller and Nodewright.
func (p *Plan) Node(n int, inst Instance) *corev1.Node { return p.node(p.Nodes[n], inst) }

func (p *Plan) node(np NodePlan, inst Instance) *corev1.Node {
	s := np.Shape
	r := rand.New(rand.NewPCG(p.Seed, uint64(np.Index)<<8|1))
	created := p.Now.Add(-np.Age)
	heartbeat := metav1.NewTime(p.Now.Add(-time.Duration(r.IntN(40)) * time.Second).Truncate(time.Second))
	joined := metav1.NewTime(created.Add(40 * time.Second).Truncate(time.Second))
	labels := nodeLabels(np, inst)
	annotations := map[string]string{
		"alpha.kubernetes.io/provided-node-ip":                   inst.PrivateIP,
		"csi.volume.kubernetes.io/nodeid":                        fmt.Sprintf(`{"ebs.csi.aws.com":"%s"}`, inst.ID),
		"karpenter.k8s.aws/ec2nodeclass-hash":                    "15616957348189460630",
		"karpenter.k8s.aws/ec2nodeclass-hash-version":            "v4",
		"karpenter.sh/nodepool-hash":                             "4012513481623584108",
		"karpenter.sh/nodepool-hash-version":                     "v3",
		"node.alpha.kubernetes.io/ttl":                           "0",
		"volumes.kubernetes.io/controller-managed-attach-detach": "true",
		"nodewright.sh/nodeclaim":                                np.Claim,
	}
	maxPods := int64(s.MaxPods())
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewQuantity(int64(s.VCPU), resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity(s.capacityMemoryMiB()<<20, resource.BinarySI),
		corev1.ResourceEphemeralStorage: resource.MustParse("104845292Ki"),
		"hugepages-1Gi":                 resource.MustParse("0"), "hugepages-2Mi": resource.MustParse("0"),
		corev1.ResourcePods: *resource.NewQuantity(maxPods, resource.DecimalSI),
	}
	allocatable := corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewMilliQuantity(s.allocatableMilliCPU(), resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity(s.allocatableMemoryMiB()<<20, resource.BinarySI),
		corev1.ResourceEphemeralStorage: resource.MustParse("95551679124"),
		"hugepages-1Gi":                 resource.MustParse("0"), "hugepages-2Mi": resource.MustParse("0"),
		corev1.ResourcePods: *resource.NewQuantity(maxPods, resource.DecimalSI),
	}
	conditions := []corev1.NodeCondition{
		{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientMemory", Message: "kubelet has sufficient memory available"},
		{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasNoDiskPressure", Message: "kubelet has no disk pressure"},
		{Type: corev1.NodePIDPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientPID", Message: "kubelet has sufficient PID available"},
		{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status"},
	}
	for i := range conditions {
		conditions[i].LastHeartbeatTime, conditions[i].LastTransitionTime = heartbeat, joined
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: inst.PrivateDNS, Labels: labels, Annotations: annotations,
			UID: types.UID(uid(r)), CreationTimestamp: metav1.NewTime(created.Truncate(time.Second)), Finalizers: []string{nodeFinalizer}},
		Spec: corev1.NodeSpec{ProviderID: inst.ProviderID(np.Zone)},
		Status: corev1.NodeStatus{
			Capacity: capacity, Allocatable: allocatable, Conditions: conditions, Phase: "",
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: inst.PrivateIP},
				{Type: corev1.NodeInternalDNS, Address: inst.PrivateDNS}, {Type: corev1.NodeHostName, Address: inst.PrivateDNS}},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
			NodeInfo: corev1.NodeSystemInfo{MachineID: hexString(r, 32), SystemUUID: "ec2" + hexString(r, 5) + "-" + hexString(r, 4) + "-" + hexString(r, 4) + "-" + hexString(r, 4) + "-" + hexString(r, 12),
				BootID: uid(r), KernelVersion: "6.1.155-176.282.amzn2023.x86_64", OSImage: "Amazon Linux 2023.9.20251110",
				ContainerRuntimeVersion: "containerd://2.1.4", KubeletVersion: "v1.34.2-eks-ecaa3a6",
				OperatingSystem: "linux", Architecture: "amd64"},
			Images: p.nodeImages(r),
		},
	}
	node.ManagedFields = nodeManagedFields(node, created)
	return node
}

// nodeImages are ~50 images, as a node that has run a few weeks of workloads has pulled: the
// DaemonSets' and a sample of the workloads', each with its digest and tag names.
func (p *Plan) nodeImages(r *rand.Rand) []corev1.ContainerImage {
	count := 45 + r.IntN(11)
	out := make([]corev1.ContainerImage, 0, count)
	for i := 0; i < count; i++ {
		var w Workload
		if i < len(p.DaemonSets) {
			w = p.DaemonSets[i]
		} else {
			w = p.Workloads[r.IntN(len(p.Workloads))]
		}
		c := r.IntN(1 + w.Sidecars)
		ref := imageOf(w, c)
		out = append(out, corev1.ContainerImage{Names: []string{ref.repo + "@sha256:" + ref.digest, ref.repo + ":" + ref.tag},
			SizeBytes: int64(20_000_000 + r.IntN(400_000_000))})
	}
	return out
}

// nodeManagedFields are the managers of an EKS Node: the kubelet (registration and status), the cloud
// node controller (addresses, zone labels), the VPC resource controller (ENI annotations) and Nodewright
// (registration labels, finalizer).
func nodeManagedFields(n *corev1.Node, created time.Time) []metav1.ManagedFieldsEntry {
	kubelet := fieldSet{}.add("metadata", "annotations", ".").add("metadata", "labels", ".")
	for _, k := range []string{"alpha.kubernetes.io/provided-node-ip", "node.alpha.kubernetes.io/ttl", "volumes.kubernetes.io/controller-managed-attach-detach"} {
		kubelet.add("metadata", "annotations", k)
	}
	for _, k := range []string{"beta.kubernetes.io/arch", "beta.kubernetes.io/os", "kubernetes.io/arch", "kubernetes.io/hostname", "kubernetes.io/os",
		"karpenter.sh/capacity-type", "karpenter.sh/nodepool", "karpenter.k8s.aws/ec2nodeclass", "workload-class"} {
		kubelet.add("metadata", "labels", k)
	}
	kubelet.add("spec", "providerID")
	status := fieldSet{}
	for _, c := range n.Status.Conditions {
		k := `k:{"type":"` + string(c.Type) + `"}`
		for _, f := range []string{".", "lastHeartbeatTime", "lastTransitionTime", "message", "reason", "status", "type"} {
			status.add("status", "conditions", k, f)
		}
	}
	for _, a := range n.Status.Addresses {
		status.add("status", "addresses", `k:{"type":"`+string(a.Type)+`"}`, ".").add("status", "addresses", `k:{"type":"`+string(a.Type)+`"}`, "address")
	}
	for res := range n.Status.Allocatable {
		status.add("status", "allocatable", string(res)).add("status", "capacity", string(res))
	}
	status.add("status", "daemonEndpoints", "kubeletEndpoint", "Port").add("status", "images")
	for _, f := range []string{"architecture", "bootID", "containerRuntimeVersion", "kernelVersion", "kubeletVersion", "machineID", "operatingSystem", "osImage", "systemUUID"} {
		status.add("status", "nodeInfo", f)
	}
	cloud := fieldSet{}
	for _, k := range []string{"beta.kubernetes.io/instance-type", "failure-domain.beta.kubernetes.io/region", "failure-domain.beta.kubernetes.io/zone",
		"k8s.io/cloud-provider-aws", "node.kubernetes.io/instance-type", "topology.k8s.aws/zone-id", "topology.kubernetes.io/region", "topology.kubernetes.io/zone"} {
		cloud.add("metadata", "labels", k)
	}
	csi := fieldSet{}.add("metadata", "annotations", "csi.volume.kubernetes.io/nodeid").add("metadata", "labels", "topology.ebs.csi.aws.com/zone")
	nw := fieldSet{}.add("metadata", "finalizers", ".").add("metadata", "finalizers", `v:"`+nodeFinalizer+`"`)
	for k := range n.Labels {
		if strings.HasPrefix(k, "karpenter.") {
			nw.add("metadata", "labels", k)
		}
	}
	for _, k := range []string{"karpenter.k8s.aws/ec2nodeclass-hash", "karpenter.k8s.aws/ec2nodeclass-hash-version", "karpenter.sh/nodepool-hash", "karpenter.sh/nodepool-hash-version", "nodewright.sh/nodeclaim"} {
		nw.add("metadata", "annotations", k)
	}
	return []metav1.ManagedFieldsEntry{
		entry("kubelet", metav1.ManagedFieldsOperationUpdate, "", created.Add(30*time.Second), kubelet),
		entry("aws-cloud-controller-manager", metav1.ManagedFieldsOperationUpdate, "", created.Add(32*time.Second), cloud),
		entry("aws-cloud-controller-manager", metav1.ManagedFieldsOperationUpdate, "status", created.Add(32*time.Second),
			fieldSet{}.add("status", "addresses")),
		entry("ebs-csi-node", metav1.ManagedFieldsOperationUpdate, "", created.Add(60*time.Second), csi),
		entry("nodewright", metav1.ManagedFieldsOperationUpdate, "", created.Add(45*time.Second), nw),
		entry("kubelet", metav1.ManagedFieldsOperationUpdate, "status", created.Add(90*time.Second), status),
	}
}

// hexString draws n hexadecimal digits.
func hexString(r *rand.Rand, n int) string {
	const hex = "0123456789abcdef"
	b := make([]byte, n)
	for i := range b {
		b[i] = hex[r.IntN(16)]
	}
	return string(b)
}

// JoiningNodes plans n more nodes for round rep of the lifecycle scenario: launched, their Nodes just
// registered by the kubelet.
func (p *Plan) JoiningNodes(rep, n int) []NodePlan {
	r := rand.New(rand.NewPCG(p.Seed, uint64(rep)<<32|0x701e))
	out := make([]NodePlan, n)
	for i := range out {
		s := shapes[r.IntN(2)]
		out[i] = NodePlan{Index: len(p.Nodes) + rep*n + i, Shape: s, Zone: Zones[r.IntN(len(Zones))], CapacityType: "on-demand",
			NodePool: "general", Claim: "general-" + randomString(r, 5), Age: 20 * time.Second}
	}
	return out
}

// JoiningNode is the Node of a joining node as its kubelet registers it: the labels of its user data and
// the kubelet's own, karpenter.sh/unregistered taint, Ready, a few images pulled, no finalizer and none
// of the labels registration adds.
func (p *Plan) JoiningNode(np NodePlan, inst Instance) *corev1.Node {
	n := p.node(np, inst)
	for _, k := range []string{"karpenter.sh/registered", "karpenter.sh/initialized"} {
		delete(n.Labels, k)
	}
	for k := range n.Labels {
		if strings.HasPrefix(k, "karpenter.k8s.aws/instance-") {
			delete(n.Labels, k)
		}
	}
	for _, k := range []string{"karpenter.k8s.aws/ec2nodeclass-hash", "karpenter.k8s.aws/ec2nodeclass-hash-version", "karpenter.sh/nodepool-hash",
		"karpenter.sh/nodepool-hash-version", "nodewright.sh/nodeclaim", "csi.volume.kubernetes.io/nodeid"} {
		delete(n.Annotations, k)
	}
	n.Finalizers = nil
	n.Spec.Taints = []corev1.Taint{{Key: "karpenter.sh/unregistered", Effect: corev1.TaintEffectNoExecute}}
	n.Status.Images = n.Status.Images[:len(p.DaemonSets)]
	n.ManagedFields = nil
	return n
}
