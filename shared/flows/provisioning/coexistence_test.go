package provisioning

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// readyNode is a Ready, initialized Node of NodePool pool with the provider id of instance id in
// us-east-1a, cpu CPUs of capacity and free CPUs allocatable, and taints.
func readyNode(name, pool, id, cpu, free string, taints ...corev1.Taint) corev1.Node {
	capacity := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("16Gi"),
		corev1.ResourcePods: resource.MustParse("110")}
	allocatable := capacity.DeepCopy()
	allocatable[corev1.ResourceCPU] = resource.MustParse(free)
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name,
		scheduling.LabelNodePool: pool, scheduling.LabelNodeInitalized: "true", corev1.LabelArchStable: "amd64", corev1.LabelOSStable: "linux"}},
		Spec:   corev1.NodeSpec{ProviderID: "aws:///us-east-1a/" + id, Taints: taints},
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: allocatable}}
}

// runningOn is a running pod of one CPU bound to node, owned by a ReplicaSet.
func runningOn(name, node string) *corev1.Pod {
	return boundTo(name, node, func(p *corev1.Pod) {
		p.OwnerReferences = []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "app"}}
		p.Spec.Containers = []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}
	})
}

// initializedClaim is the record of one of Nodewright's Nodes: launched as instance id in us-east-1a,
// registered as node.
func initializedClaim(name, id, node string) state.Claim {
	return state.Claim{Name: name, NodePool: "default", NodeClass: "default", Lifecycle: state.Initialized, InstanceID: id,
		InstanceType: "m5.xlarge", Zone: "us-east-1a", CapacityType: "spot", ProviderID: "aws:///us-east-1a/" + id, NodeName: node}
}

// Karpenter taints the Nodes it disrupts karpenter.sh/disrupted:NoSchedule as Nodewright does, and
// launches their replacements itself. Only a Node one of Nodewright's claims stands for is Nodewright's
// drain to provision for; the old code took any tainted Node for its own and launched a duplicate.
func TestRunProvisionsOnlyForItsOwnDisruptedNodes(t *testing.T) {
	for name, c := range map[string]struct {
		claims  []state.Claim
		pending int
	}{
		"Karpenter's Node, no claim stands for it": {},
		"Nodewright's Node, its claim records its provider id": {claims: []state.Claim{initializedClaim("default-own01", "i-1", "tainted")},
			pending: 2},
	} {
		t.Run(name, func(t *testing.T) {
			snap := &kube.Snapshot{Nodes: []corev1.Node{readyNode("tainted", "default", "i-1", "4", "4", apis.DisruptedNoScheduleTaint)},
				Bound: []*corev1.Pod{runningOn("a", "tainted"), runningOn("b", "tainted")}}
			w := newTestProvisioner(t, fakeCluster{snap: snap})
			for _, cl := range c.claims {
				_, err := w.store.CreateClaim(context.Background(), cl)
				require.NoError(t, err)
			}
			rep, err := w.p.Run(context.Background(), "run-1")
			require.NoError(t, err)
			assert.Equal(t, c.pending, rep.PendingPods, "pods of the disrupted Node that need a new place")
			if c.pending == 0 {
				assert.Empty(t, rep.Claims)
				assert.Empty(t, w.ec2.requests, "Karpenter launches the replacement of its own Node")
				return
			}
			require.Len(t, rep.Claims, 1, "replacement capacity before the drain, although the Node has room")
			assert.Equal(t, 2, rep.Claims[0].Pods)
		})
	}
}

// limitedPoolAndClass is poolAndClass with a NodePool limit of cpu CPUs.
func limitedPoolAndClass(cpu string) string {
	return strings.Replace(poolAndClass, "spec:\n  template:", "spec:\n  limits: {cpu: \""+cpu+"\"}\n  template:", 1)
}

// During a migration Karpenter's NodePools may have the same names as Nodewright's, so its Nodes carry
// karpenter.sh/nodepool=default too. Only the capacity Nodewright's claims stand for uses up its
// NodePool's limits; the old code counted every Node with the label and launched nothing.
func TestRunCountsOnlyItsOwnNodesAgainstNodePoolLimits(t *testing.T) {
	for name, c := range map[string]struct {
		limit  string
		claims []state.Claim
		launch bool
	}{
		"two full Karpenter Nodes of 4 CPUs and a limit of 8": {limit: "8", launch: true},
		"and one of Nodewright's, 4 CPUs left":                {limit: "8", claims: []state.Claim{initializedClaim("default-own01", "i-own", "own")}, launch: true},
		"one of Nodewright's Nodes uses up a limit of 4":      {limit: "4", claims: []state.Claim{initializedClaim("default-own01", "i-own", "own")}},
	} {
		t.Run(name, func(t *testing.T) {
			snap := pendingSnapshot(pod("a", nil), pod("b", nil))
			snap.Nodes = []corev1.Node{readyNode("karpenter-1", "default", "i-k1", "4", "100m"), readyNode("karpenter-2", "default", "i-k2", "4", "100m"),
				readyNode("own", "default", "i-own", "4", "100m")}
			w := newTestProvisioner(t, fakeCluster{snap: snap})
			_, err := w.store.ApplyConfig(context.Background(), storedConfig(t, limitedPoolAndClass(c.limit)), false)
			require.NoError(t, err)
			for _, cl := range c.claims {
				_, err := w.store.CreateClaim(context.Background(), cl)
				require.NoError(t, err)
			}
			rep, err := w.p.Run(context.Background(), "run-1")
			require.NoError(t, err)
			assert.Equal(t, 2, rep.PendingPods)
			if !c.launch {
				assert.Empty(t, rep.Claims, "Nodewright's own Node counts against the limit")
				require.Len(t, rep.Unschedulable, 2)
				assert.Contains(t, rep.Unschedulable[0].Reason, "limits")
				return
			}
			require.Len(t, rep.Claims, 1, "Karpenter's Nodes do not use up the limit: %v", rep.Unschedulable)
			assert.Equal(t, 2, rep.Claims[0].Pods)
			assert.Empty(t, rep.Unschedulable)
		})
	}
}
