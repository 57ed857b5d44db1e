package scalebench

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var planNow = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

// smallTier keeps the unit tests quick; the shapes are the same at every tier.
var smallTier = Tier{Nodes: 100, Pods: 3000}

func fakeInstance(n int) Instance {
	return Instance{ID: fmt.Sprintf("i-%017x", n), PrivateIP: fmt.Sprintf("10.0.%d.%d", n/250, 1+n%250),
		PrivateDNS: fmt.Sprintf("ip-10-0-%d-%d.ec2.internal", n/250, 1+n%250)}
}

func TestThePlanHasTheTiersPodsAndEveryDaemonSetOnEveryNode(t *testing.T) {
	p, err := NewPlan(1, smallTier, planNow)
	require.NoError(t, err)
	assert.Len(t, p.Nodes, smallTier.Nodes)
	assert.Len(t, p.Pods, smallTier.Pods)
	assert.Len(t, p.Namespaces, namespaceCount)
	daemons := map[int]int{}
	for _, pp := range p.Pods {
		require.GreaterOrEqual(t, pp.Node, 0, "every planned pod is bound")
		if pp.DaemonSet {
			daemons[pp.Node]++
		}
	}
	for n := range p.Nodes {
		assert.Equal(t, daemonSetCount, daemons[n], "node %d", n)
	}
	assert.Len(t, p.PodsOn(0), TerminationNodePods, "node 0 is the termination scenario's node")
}

func TestPlacedPodsFitTheirNodes(t *testing.T) {
	p, err := NewPlan(2, smallTier, planNow)
	require.NoError(t, err)
	for _, n := range p.Nodes {
		assert.LessOrEqual(t, n.pods, n.Shape.MaxPods(), n.Shape.Name)
		assert.LessOrEqual(t, float64(n.cpu), float64(n.Shape.allocatableMilliCPU()), n.Shape.Name)
		assert.LessOrEqual(t, float64(n.mem), float64(n.Shape.allocatableMemoryMiB()), n.Shape.Name)
	}
}

func TestTheSameSeedGivesTheSameCluster(t *testing.T) {
	a, err := NewPlan(7, smallTier, planNow)
	require.NoError(t, err)
	b, err := NewPlan(7, smallTier, planNow)
	require.NoError(t, err)
	assert.Equal(t, a.Pods, b.Pods)
	for _, i := range []int{0, 500, 2999} {
		pp := a.Pods[i]
		n := fakeInstance(pp.Node)
		pa, err := a.Pod(pp, n.PrivateDNS, n.PrivateIP).Marshal()
		require.NoError(t, err)
		pb, err := b.Pod(pp, n.PrivateDNS, n.PrivateIP).Marshal()
		require.NoError(t, err)
		assert.Equal(t, pa, pb)
	}
	na, err := a.Node(3, fakeInstance(3)).Marshal()
	require.NoError(t, err)
	nb, err := b.Node(3, fakeInstance(3)).Marshal()
	require.NoError(t, err)
	assert.Equal(t, na, nb)
}

// TestMedianPodIsAtLeastFourKilobytesAsProtobuf holds the generator to issue #23's shape: real pods are
// 4–8 KB in protobuf, and a harness of small pods would measure nothing.
func TestMedianPodIsAtLeastFourKilobytesAsProtobuf(t *testing.T) {
	p, err := NewPlan(3, smallTier, planNow)
	require.NoError(t, err)
	var sizes []int
	for _, pp := range p.Pods {
		n := fakeInstance(pp.Node)
		pod := p.Pod(pp, n.PrivateDNS, n.PrivateIP)
		b, err := pod.Marshal()
		require.NoError(t, err)
		sizes = append(sizes, len(b))
		for _, c := range pod.Spec.Containers {
			for res, q := range c.Resources.Requests {
				require.Positive(t, q.MilliValue(), "%s %s of %s", res, c.Name, pod.Name)
			}
		}
	}
	sort.Ints(sizes)
	median := sizes[len(sizes)/2]
	assert.GreaterOrEqual(t, median, 4096, "median pod %d bytes", median)
	assert.Less(t, sizes[len(sizes)-1], 32<<10, "no pod is outlandish")
	t.Logf("pod protobuf bytes: min %d, median %d, max %d", sizes[0], median, sizes[len(sizes)-1])
}

func TestNodesLookLikeEKSNodes(t *testing.T) {
	p, err := NewPlan(4, smallTier, planNow)
	require.NoError(t, err)
	n := p.Node(5, fakeInstance(5))
	assert.GreaterOrEqual(t, len(n.Status.Images), 45)
	assert.GreaterOrEqual(t, len(n.ManagedFields), 4)
	assert.Equal(t, "aws:///"+p.Nodes[5].Zone+"/"+fakeInstance(5).ID, n.Spec.ProviderID)
	for _, k := range []string{"karpenter.sh/nodepool", "node.kubernetes.io/instance-type", "topology.kubernetes.io/zone", "karpenter.sh/capacity-type"} {
		assert.NotEmpty(t, n.Labels[k], k)
	}
	b, err := n.Marshal()
	require.NoError(t, err)
	t.Logf("node protobuf bytes: %d", len(b))
}

func TestPendingPodsAreUnschedulableAndNamedApart(t *testing.T) {
	p, err := NewPlan(5, smallTier, planNow)
	require.NoError(t, err)
	names := map[string]bool{}
	for _, pp := range p.Pods {
		names[p.Pod(pp, "", "").Namespace+"/"+p.PodName(pp)] = true
	}
	pending := p.PendingPods(30)
	require.Len(t, pending, 30)
	for _, pp := range pending {
		pod := p.Pod(pp, "", "")
		assert.Empty(t, pod.Spec.NodeName)
		assert.False(t, names[pod.Namespace+"/"+pod.Name], "pending pod %s collides with a bound one", pod.Name)
		names[pod.Namespace+"/"+pod.Name] = true
		require.Len(t, pod.Status.Conditions, 1)
		assert.Equal(t, "Unschedulable", pod.Status.Conditions[0].Reason)
		cpu := pod.Spec.Containers[0].Resources.Requests.Cpu().MilliValue()
		for _, n := range p.Nodes[1:] {
			assert.Greater(t, float64(cpu), (1-utilization)*float64(n.Shape.allocatableMilliCPU()), "a pending pod asks for more than the share placement keeps free on every node")
		}
	}
}

func TestParseTiers(t *testing.T) {
	all, err := ParseTiers("")
	require.NoError(t, err)
	assert.Equal(t, Tiers, all)
	two, err := ParseTiers("1000, 5000")
	require.NoError(t, err)
	assert.Equal(t, []Tier{Tiers[0], Tiers[2]}, two)
	_, err = ParseTiers("3000")
	assert.ErrorContains(t, err, "SCALE_TIERS")
}

// TestClaimNamesAreUniqueAtTheLargestTier: five random characters per claim collided at 5,000 nodes
// (seed 1), and loading the tier stopped at the second claim of the name.
func TestClaimNamesAreUniqueAtTheLargestTier(t *testing.T) {
	tiers, err := ParseTiers("5000")
	require.NoError(t, err)
	p, err := NewPlan(1, tiers[0], planNow)
	require.NoError(t, err)
	seen := map[string]int{}
	for i, n := range p.Nodes {
		if j, ok := seen[n.Claim]; ok {
			t.Fatalf("nodes %d and %d share the claim name %s", j, i, n.Claim)
		}
		seen[n.Claim] = i
	}
}
