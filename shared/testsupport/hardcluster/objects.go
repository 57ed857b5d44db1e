package hardcluster

import (
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// The DaemonSet's and the guarded deployment's requests, and the NodePool's name.
const (
	daemonCPU, daemonMem   = 100, 128 << 20
	guardedCPU, guardedMem = 200, 256 << 20
	poolName               = "default"
	guardedApp             = "guarded"
	managedNodeGroup       = "system"
)

// created is when every object was created: long before any run, so consolidateAfter has passed.
var created = metav1.NewTime(time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC))

// nodeName names node i.
func nodeName(i int) string {
	return fmt.Sprintf("ip-10-%d-%d-%d.ec2.internal", 16+i/65536, i/256%256, i%256)
}

// newNode is n as the API server would hold it: the catalog's labels, the well-known ones, the
// NodePool's (registered; initialized unless it never was) or the managed node group's, a provider
// id, Ready, and the catalog's capacity and allocatable.
func newNode(n *node) corev1.Node {
	name := nodeName(n.index)
	labels := maps.Clone(n.entry.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, map[string]string{
		scheduling.LabelInstanceType: n.entry.Name, scheduling.LabelZone: n.zone, scheduling.LabelRegion: "us-east-1",
		scheduling.LabelArch: n.entry.Arch, scheduling.LabelOS: "linux", scheduling.LabelHostname: name,
		scheduling.LabelCapacityType: n.capacityType,
	})
	if n.managed {
		labels["eks.amazonaws.com/nodegroup"] = managedNodeGroup
		labels["eks.amazonaws.com/capacityType"] = "ON_DEMAND"
	} else {
		labels[scheduling.LabelNodePool] = poolName
		labels["karpenter.k8s.aws/ec2nodeclass"] = poolName
		labels["karpenter.sh/registered"] = "true"
		if !n.uninitialized {
			labels[scheduling.LabelNodeInitalized] = "true"
		}
	}
	capacity, alloc := n.entry.Allocatable, n.entry.Allocatable
	if n.entry.Capacity != nil {
		capacity = n.entry.Capacity
	}
	return corev1.Node{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, CreationTimestamp: created},
		Spec:       corev1.NodeSpec{ProviderID: fmt.Sprintf("aws:///%s/i-%017x", n.zone, 0xa000000+n.index)},
		Status: corev1.NodeStatus{
			Capacity:    resourceList(capacity.CPUMillis, int64(capacity.MemoryMiB*(1<<20)), capacity.Pods),
			Allocatable: resourceList(alloc.CPUMillis, int64(alloc.MemoryMiB*(1<<20)), alloc.Pods),
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastTransitionTime: created}},
		},
	}
}

func resourceList(cpu, mem, pods int64) corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(cpu, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(mem, resource.BinarySI),
		corev1.ResourcePods:   *resource.NewQuantity(pods, resource.DecimalSI),
	}
}

// newPod is a running, ready pod of app's ReplicaSet bound to n, zone-spread when spread is set.
func newPod(name, app string, n *node, cpu, mem int64, spread corev1.UnsatisfiableConstraintAction) corev1.Pod {
	p := basePod("default", name, app, "ReplicaSet", app+"-5d8f7c", n, cpu, mem)
	p.Labels["pod-template-hash"] = "5d8f7c"
	if spread != "" {
		p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
			MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone, WhenUnsatisfiable: spread,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
		}}
	}
	return p
}

// newDaemonPod is the DaemonSet's pod on n.
func newDaemonPod(n *node) corev1.Pod {
	p := basePod("kube-system", "node-agent-"+nodeName(n.index), "node-agent", "DaemonSet", "node-agent", n, daemonCPU, daemonMem)
	p.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
	return p
}

// newGuardedPod is the guarded deployment's pod on n.
func newGuardedPod(n *node) corev1.Pod {
	return basePod("default", fmt.Sprintf("%s-%05d", guardedApp, n.index), guardedApp, "ReplicaSet", guardedApp+"-7c9b4d", n, guardedCPU, guardedMem)
}

func basePod(ns, name, app, ownerKind, owner string, n *node, cpu, mem int64) corev1.Pod {
	yes := true
	start := created
	return corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": app}, CreationTimestamp: created,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: ownerKind, Name: owner, UID: types.UID("uid-" + owner), Controller: &yes}}},
		Spec: corev1.PodSpec{NodeName: nodeName(n.index), Containers: []corev1.Container{{Name: "main", Image: "registry.example/" + app + ":1",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU:    *resource.NewMilliQuantity(cpu, resource.DecimalSI),
				corev1.ResourceMemory: *resource.NewQuantity(mem, resource.BinarySI),
			}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &start,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: created}}},
	}
}

// guardedPDB allows no disruption of the guarded deployment's pods.
func guardedPDB(pods int) policyv1.PodDisruptionBudget {
	zero := intstr.FromInt32(0)
	return policyv1.PodDisruptionBudget{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
		ObjectMeta: metav1.ObjectMeta{Name: guardedApp, Namespace: "default", CreationTimestamp: created},
		Spec:       policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &zero, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": guardedApp}}},
		Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 0, CurrentHealthy: int32(pods), DesiredHealthy: int32(pods), ExpectedPods: int32(pods)},
	}
}

// NodePools is the NodePool and EC2NodeClass of every generated cluster: spot and on-demand c, m and
// r amd64 nodes, consolidating underused nodes after 30s under the default budget (10% of the nodes).
const NodePools = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      requirements:
        - {key: kubernetes.io/arch, operator: In, values: [amd64]}
        - {key: karpenter.sh/capacity-type, operator: In, values: [spot, on-demand]}
        - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m, r]}
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 30s
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  role: KarpenterNodeRole-hard
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: hard}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: hard}}]
  amiSelectorTerms: [{alias: al2023@latest}]
`

// DaemonSets is the one DaemonSet every node runs.
const DaemonSets = `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: node-agent, namespace: kube-system}
spec:
  selector: {matchLabels: {app: node-agent}}
  template:
    metadata: {labels: {app: node-agent}}
    spec:
      tolerations: [{operator: Exists}]
      containers:
        - name: agent
          image: registry.example/node-agent:1
          resources: {requests: {cpu: 100m, memory: 128Mi}}
`
