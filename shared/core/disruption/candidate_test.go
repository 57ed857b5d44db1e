package disruption_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/core/disruption"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
)

// TestCandidates runs one node (named "n", with a web pod unless the case says otherwise) beside an
// unmanaged node with room, and checks that it is removed, or kept with the expected reason.
func TestCandidates(t *testing.T) {
	small := schedulingtest.SmallCatalog()
	od := scheduling.CapacityTypeOnDemand
	deleted := metav1.NewTime(now)
	alwaysAllow := policyv1.AlwaysAllow
	cases := []struct {
		name   string
		pool   disruption.NodePool
		pods   []*corev1.Pod
		pdbs   []*policyv1.PodDisruptionBudget
		modify func(*disruption.Node)
		// kept is a substring of the reason; "" means the node is removed.
		kept string
	}{
		{name: "a plain underused node is removed"},
		{name: "not managed by Nodewright", modify: func(n *disruption.Node) { n.NodePool = "" }, kept: "not managed by Nodewright"},
		{name: "unknown NodePool", modify: func(n *disruption.Node) { n.NodePool = "gone" }, kept: "NodePool gone is unknown"},
		{name: "not initialized", modify: func(n *disruption.Node) { n.Initialized = false }, kept: "not initialized"},
		{name: "already disrupting (flag)", modify: func(n *disruption.Node) { n.Disrupting = true }, kept: "already being disrupted"},
		{name: "already disrupting (deleting)", modify: func(n *disruption.Node) { n.Node.DeletionTimestamp = &deleted }, kept: "already being disrupted"},
		{
			name: "already disrupting (taint)", kept: "already being disrupted",
			modify: func(n *disruption.Node) {
				n.Node.Spec.Taints = []corev1.Taint{{Key: scheduling.TaintDisrupted, Effect: corev1.TaintEffectNoSchedule}}
			},
		},
		{
			name: "node do-not-disrupt", kept: "the node has the karpenter.sh/do-not-disrupt annotation",
			modify: func(n *disruption.Node) {
				n.Node.Annotations = map[string]string{disruption.AnnotationDoNotDisrupt: "true"}
			},
		},
		{
			name: "node do-not-disrupt other than true does not block",
			modify: func(n *disruption.Node) {
				n.Node.Annotations = map[string]string{disruption.AnnotationDoNotDisrupt: "false"}
			},
		},
		{
			name: "pod do-not-disrupt", kept: "pod default/web has the karpenter.sh/do-not-disrupt annotation",
			pods: []*corev1.Pod{annotated(pod("web", "1"), disruption.AnnotationDoNotDisrupt, "true")},
		},
		{
			name: "pod do-not-disrupt for a duration not over yet", kept: "pod default/web has the karpenter.sh/do-not-disrupt annotation until 2026-06-01T12:10:00Z",
			pods: []*corev1.Pod{started(annotated(pod("web", "1"), disruption.AnnotationDoNotDisrupt, "30m"), now.Add(-20*time.Minute))},
		},
		{
			name: "pod do-not-disrupt for a duration that is over",
			pods: []*corev1.Pod{started(annotated(pod("web", "1"), disruption.AnnotationDoNotDisrupt, "30m"), now.Add(-40*time.Minute))},
		},
		{
			name: "pod do-not-disrupt with an invalid value protects nothing",
			pods: []*corev1.Pod{annotated(pod("web", "1"), disruption.AnnotationDoNotDisrupt, "yes please")},
		},
		{
			name: "a finished pod's do-not-disrupt does not block",
			pods: []*corev1.Pod{pod("web", "1"), annotated(pod("job", "1"), disruption.AnnotationDoNotDisrupt, "true")},
			modify: func(n *disruption.Node) {
				n.Pods[1].Status.Phase = corev1.PodSucceeded
			},
		},
		{
			name: "a DaemonSet pod's do-not-disrupt blocks too",
			pods: []*corev1.Pod{pod("web", "1"), annotated(daemonPod("ds"), disruption.AnnotationDoNotDisrupt, "true")},
			kept: "pod default/ds has the karpenter.sh/do-not-disrupt annotation",
		},
		{name: "PDB allows no disruption", pdbs: []*policyv1.PodDisruptionBudget{pdb("web", "web", 0)}, kept: "PodDisruptionBudget default/web allows no disruption of pod default/web"},
		{name: "PDB allows a disruption", pdbs: []*policyv1.PodDisruptionBudget{pdb("web", "web", 1)}},
		{
			name: "a CapacityBuffer's virtual pod under a PDB at 0 does not block", pdbs: []*policyv1.PodDisruptionBudget{pdb("web", "web", 0)},
			pods: []*corev1.Pod{annotated(pod("web", "1"), scheduling.AnnotationBufferPod, "true")},
		},
		{
			name: "a CapacityBuffer's virtual pod keeps a WhenEmpty node: it holds buffer room", pool: pool("default", policy(disruption.WhenEmpty)),
			pods: []*corev1.Pod{annotated(pod("web", "1"), scheduling.AnnotationBufferPod, "true")}, kept: "consolidates only empty nodes (WhenEmpty)",
		},
		{name: "PDB of another app", pdbs: []*policyv1.PodDisruptionBudget{pdb("api", "api", 0)}},
		{
			name: "pod under two PDBs", kept: "covered by more than one PodDisruptionBudget (web, web2)",
			pdbs: []*policyv1.PodDisruptionBudget{pdb("web", "web", 5), pdb("web2", "web", 5)},
		},
		{
			name: "unready pod under AlwaysAllow passes a PDB at 0",
			pdbs: []*policyv1.PodDisruptionBudget{func() *policyv1.PodDisruptionBudget {
				p := pdb("web", "web", 0)
				p.Spec.UnhealthyPodEvictionPolicy = &alwaysAllow
				return p
			}()},
			modify: func(n *disruption.Node) { n.Pods[0].Status.Conditions[0].Status = corev1.ConditionFalse },
		},
		{name: "consolidateAfter Never", pool: pool("default", consolidateAfter(nil)), kept: "consolidateAfter Never"},
		{
			name: "consolidateAfter not yet passed since the last pod event", pool: pool("default", consolidateAfter(dur(10*time.Minute))),
			modify: func(n *disruption.Node) { n.LastPodEvent = now.Add(-5 * time.Minute) },
			kept:   "consolidatable at 2026-06-01T12:05:00Z",
		},
		{
			name: "consolidateAfter passed", pool: pool("default", consolidateAfter(dur(10*time.Minute))),
			modify: func(n *disruption.Node) { n.LastPodEvent = now.Add(-10 * time.Minute) },
		},
		{
			name: "consolidateAfter counts from launch without pod events", pool: pool("default", consolidateAfter(dur(10*time.Minute))),
			modify: func(n *disruption.Node) { n.LaunchedAt = now.Add(-time.Minute) },
			kept:   "consolidatable at 2026-06-01T12:09:00Z",
		},
		{name: "WhenEmpty keeps a node with pods", pool: pool("default", policy(disruption.WhenEmpty)), kept: "consolidates only empty nodes (WhenEmpty)"},
		{name: "WhenEmpty removes an empty node", pool: pool("default", policy(disruption.WhenEmpty)), pods: []*corev1.Pod{daemonPod("ds")}},
		{
			name: "a pod the scheduler refuses keeps its node", kept: "pod default/web could not be rescheduled anywhere",
			pods: []*corev1.Pod{schedulingtest.Pod(schedulingtest.PodOptions{Name: "web", CPU: "1", NodeSelector: map[string]string{corev1.LabelHostname: "n"}})},
		},
		{name: "unknown price keeps a node with pods", modify: func(n *disruption.Node) { n.Price = 0 }, kept: "price is unknown"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.pool
			if p.Scheduling.Name == "" {
				p = pool("default")
			}
			pods := tc.pods
			if pods == nil {
				pods = []*corev1.Pod{pod("web", "1")}
			}
			n := node(small, nodeSpec{"n", "default", "medium", od, pods})
			if tc.modify != nil {
				tc.modify(&n)
			}
			res := disruption.Decide(disruption.Input{
				Now: now, InstanceTypes: small, NodePools: []disruption.NodePool{p}, PDBs: tc.pdbs,
				Nodes: []disruption.Node{bigUnmanaged("sink"), n},
			})
			assert.Equal(t, "not managed by Nodewright", keptReason(res, "sink"))
			if tc.kept == "" {
				require.Len(t, res.Commands, 1, "kept: %v", res.Kept)
				assert.Equal(t, []string{"n"}, nodeNames(res.Commands[0]))
				assert.Empty(t, keptReason(res, "n"))
				return
			}
			assert.Empty(t, res.Commands)
			assert.Contains(t, keptReason(res, "n"), tc.kept)
		})
	}
}

func TestEvictionCost(t *testing.T) {
	prio := func(p int32) *int32 { return &p }
	cases := []struct {
		name     string
		priority *int32
		cost     string
		want     float64
	}{
		{name: "plain pod", want: 1},
		{name: "deletion cost 2^27 adds one", cost: "134217728", want: 2},
		{name: "priority 2^25 adds one", priority: prio(1 << 25), want: 2},
		{name: "negative deletion cost", cost: "-268435456", want: -1},
		{name: "system-node-critical priority is clamped to 10", priority: prio(2000001000), want: 10},
		{name: "very negative is clamped to -10", cost: "-2147483648", want: -10},
		{name: "unreadable annotation counts as 0", cost: "lots", want: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := pod("p", "1")
			p.Spec.Priority = tc.priority
			if tc.cost != "" {
				annotated(p, disruption.AnnotationPodDeletionCost, tc.cost)
			}
			assert.InDelta(t, tc.want, disruption.EvictionCost(p), 1e-9)
		})
	}
	neg := annotated(pod("neg", "1"), disruption.AnnotationPodDeletionCost, "-2147483648")
	assert.InDelta(t, 1+1+2, disruption.RescheduleDisruptionCost([]*corev1.Pod{pod("a", "1"), neg, annotated(pod("b", "1"), disruption.AnnotationPodDeletionCost, "134217728")}), 1e-9,
		"negative costs count as 0")
}

// TestCandidateOrder checks consolidation order: price per disruption cost, highest first. Two
// nodes each fit on the sink; single-node takes the first in order.
func TestCandidateOrder(t *testing.T) {
	small := schedulingtest.SmallCatalog()
	od := scheduling.CapacityTypeOnDemand
	costly := annotated(pod("costly", "1"), disruption.AnnotationPodDeletionCost, "1073741824") // +8
	in := disruption.Input{
		Now: now, InstanceTypes: small, NodePools: []disruption.NodePool{pool("default", budgets(disruption.Budget{Nodes: "1"}))},
		Nodes: []disruption.Node{
			bigUnmanaged("sink"),
			// large: $0.40 / (1 + 9) = 0.04; medium: $0.20 / (1 + 1) = 0.10.
			node(small, nodeSpec{"expensive-but-costly", "default", "large", od, []*corev1.Pod{costly}}),
			node(small, nodeSpec{"cheap-and-easy", "default", "medium", od, []*corev1.Pod{pod("web", "1")}}),
		},
	}
	res := disruption.Decide(in)
	require.Len(t, res.Commands, 1)
	assert.Equal(t, []string{"cheap-and-easy"}, nodeNames(res.Commands[0]))
	assert.Equal(t, disruption.MethodSingle, res.Commands[0].Method)
}

// started sets the pod's status.startTime.
func started(p *corev1.Pod, at time.Time) *corev1.Pod {
	t := metav1.NewTime(at)
	p.Status.StartTime = &t
	return p
}
