package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// scenarios are cmd/nodewright's plan --disrupt scenarios, whose catalog, NodePools and DaemonSets
// the test cluster shares.
const scenarios = "../../../cmd/nodewright/testdata/disrupt"

// TestKarpenterDisruptionRemovesEmptyAndUnderusedNodes runs Karpenter's disruption controller on a
// cluster of three on-demand nodes of NodePool default: e1 holds only its DaemonSet pod, u1 (an
// m5.2xlarge) one small pod that fits beside the two pods of w1 (a c5.xlarge). Karpenter executes at
// least one command, e1 and u1 go, w1 stays, and the cost after is the catalog price of the nodes
// left. Needs etcd and kube-apiserver (`make kube-bin`).
func TestKarpenterDisruptionRemovesEmptyAndUnderusedNodes(t *testing.T) {
	dir := t.TempDir()
	nodes := corev1.NodeList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "NodeList"}, Items: []corev1.Node{
		testNode("e1", "m5.large", "1930m", "6903Mi"), testNode("u1", "m5.2xlarge", "7910m", "29317Mi"), testNode("w1", "c5.xlarge", "3920m", "6584Mi"),
	}}
	pods := corev1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"}}
	for _, n := range nodes.Items {
		pods.Items = append(pods.Items, fragmentedPod("kube-system", "node-agent-"+n.Name, n.Name, "node-agent", "DaemonSet", podShape{100, 128 << 20}, false))
	}
	pods.Items = append(pods.Items,
		fragmentedPod("default", "web-1", "w1", "web", "ReplicaSet", podShape{1500, 1 << 30}, false),
		fragmentedPod("default", "web-2", "w1", "web", "ReplicaSet", podShape{1500, 1 << 30}, false),
		fragmentedPod("default", "api-1", "u1", "api", "ReplicaSet", podShape{500, 512 << 20}, false))
	files := disruptFiles{
		Nodes: writeJSON(t, dir, "nodes.json", nodes), Pods: writeJSON(t, dir, "pods.json", pods),
		NodePools: filepath.Join(scenarios, "nodepools.yaml"), Catalog: filepath.Join(scenarios, "instance-types.json"),
		DaemonSets: filepath.Join(scenarios, "daemonsets.yaml"),
	}
	c, err := readDisruptCase("tiny", files)
	require.NoError(t, err)
	registerCatalogLabels(c.Types)

	k, err := runKarpenterDisruption(c, disruptOptions{}, io.Discard)
	require.NoError(t, err)

	assert.GreaterOrEqual(t, k.Commands, 1)
	assert.False(t, k.StillDeciding)
	assert.Zero(t, k.Unplaced)
	assert.NotContains(t, k.Left, "e1", "the empty node goes")
	assert.NotContains(t, k.Left, "u1", "the underused node goes")
	assert.Contains(t, k.Left, "w1")
	assert.InDelta(t, 0.096+0.384+0.17, k.CostBefore, 1e-9)
	// The cost after is the price of the nodes left, each read from the catalog by its offering.
	want := 0.0
	for name, n := range k.Left {
		price, ok := catalogPrice(c, n)
		require.True(t, ok, "node %s: no offering %s/%s/%s in the catalog", name, n.InstanceType, n.Zone, n.CapacityType)
		want += price
	}
	assert.InDelta(t, want, k.CostAfter, 1e-9)
	assert.Less(t, k.CostAfter, k.CostBefore)
}

// catalogPrice looks up a node's offering in NodePool default's catalog.
func catalogPrice(c *disruptCase, n leftNode) (float64, bool) {
	for _, it := range c.Types["default"] {
		if it.Name != n.InstanceType {
			continue
		}
		for _, o := range it.Offerings {
			if o.Zone == n.Zone && o.CapacityType == n.CapacityType {
				return o.Price, true
			}
		}
	}
	return 0, false
}

func testNode(name, instanceType, cpu, mem string) corev1.Node {
	alloc := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem), corev1.ResourcePods: resource.MustParse("58")}
	return corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			corev1.LabelInstanceTypeStable: instanceType, corev1.LabelTopologyZone: "us-east-1a", corev1.LabelArchStable: "amd64",
			corev1.LabelOSStable: "linux", karpv1.CapacityTypeLabelKey: karpv1.CapacityTypeOnDemand, corev1.LabelHostname: name,
			karpv1.NodePoolLabelKey: "default", karpv1.NodeInitializedLabelKey: "true", karpv1.NodeRegisteredLabelKey: "true",
			"karpenter.k8s.aws/instance-category": instanceType[:1],
		}},
		Spec:   corev1.NodeSpec{ProviderID: "aws:///us-east-1a/i-" + name},
		Status: corev1.NodeStatus{Capacity: alloc, Allocatable: alloc, Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}},
	}
}

func writeJSON(t *testing.T, dir, name string, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	require.NoError(t, err)
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, data, 0o644))
	return path
}
