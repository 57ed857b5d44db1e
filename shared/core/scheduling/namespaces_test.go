package scheduling_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/core/scheduling"
	. "github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
)

func TestNamespaceSelector(t *testing.T) {
	// n1 runs a "db" pod in namespace "data"; the new pod refuses to share a node with db pods of the
	// namespaces its term selects.
	running := Pod(PodOptions{Name: "db", Namespace: "data", CPU: "100m", Labels: map[string]string{"app": "db"}})
	nodes := []scheduling.ExistingNode{existingNode("n1", "us-west-2a", "4", running)}
	namespaces := []*corev1.Namespace{{ObjectMeta: metav1.ObjectMeta{Name: "data", Labels: map[string]string{"team": "storage"}}}}
	anti := func(nsSel *metav1.LabelSelector) *corev1.Pod {
		p := Pod(PodOptions{Name: "web", CPU: "100m"})
		p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{
			{TopologyKey: scheduling.LabelHostname, LabelSelector: selector("db"), NamespaceSelector: nsSel}}}}
		return p
	}
	tests := []struct {
		name       string
		nsSel      *metav1.LabelSelector
		namespaces []*corev1.Namespace
		onNode     bool
	}{
		{name: "a selector matching the namespace's labels keeps the pod off n1", nsSel: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "storage"}}, namespaces: namespaces},
		{name: "a selector matching no namespace lets it join n1", nsSel: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "web"}}, namespaces: namespaces, onNode: true},
		{name: "an empty selector selects every namespace", nsSel: &metav1.LabelSelector{}},
		{name: "the metadata.name label works without namespace input", nsSel: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: "data"}}},
		{name: "without namespace input other labels match nothing", nsSel: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "storage"}}, onNode: true},
		{name: "without a selector only the pod's own namespace counts", onNode: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, err := scheduling.Solve(scheduling.Input{Pods: []*corev1.Pod{anti(tt.nsSel)}, Nodes: nodes, Namespaces: tt.namespaces,
				NodePools: pools(NodePool("default")), InstanceTypes: SmallCatalog()})
			require.NoError(t, err)
			assert.Empty(t, plan.Unschedulable)
			if tt.onNode {
				assert.Empty(t, plan.NewClaims)
				require.Len(t, plan.ExistingNodes, 1)
				assert.Equal(t, []string{"default/web"}, plan.ExistingNodes[0].PodNames)
			} else {
				assert.Len(t, plan.NewClaims, 1)
				assert.Empty(t, plan.ExistingNodes)
			}
		})
	}
}

func TestSpreadNodePolicies(t *testing.T) {
	honor, ignore := corev1.NodeInclusionPolicyHonor, corev1.NodeInclusionPolicyIgnore
	zoneSpread := func(taints, affinity *corev1.NodeInclusionPolicy) []corev1.TopologySpreadConstraint {
		return []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: scheduling.LabelZone, WhenUnsatisfiable: corev1.DoNotSchedule,
			LabelSelector: selector("web"), NodeTaintsPolicy: taints, NodeAffinityPolicy: affinity}}
	}
	// Zone us-west-2b is only offered by a tainted pool the pods do not tolerate.
	split := pools(NodePool("default", Requirement(scheduling.LabelZone, scheduling.OpIn, "us-west-2a")),
		NodePool("tainted", Requirement(scheduling.LabelZone, scheduling.OpIn, "us-west-2b"), Taint("dedicated", "x", corev1.TaintEffectNoSchedule)))
	tests := []struct {
		name          string
		in            scheduling.Input
		wantZones     map[string]int
		unschedulable int
	}{
		{
			name:          "nodeTaintsPolicy Ignore counts the untolerated pool's zone as a domain",
			in:            scheduling.Input{Pods: webPods(2, PodOptions{CPU: "1500m", Spread: zoneSpread(nil, nil)}), NodePools: split},
			wantZones:     map[string]int{"us-west-2a": 1},
			unschedulable: 1,
		},
		{
			name:      "nodeTaintsPolicy Honor leaves it out",
			in:        scheduling.Input{Pods: webPods(2, PodOptions{CPU: "1500m", Spread: zoneSpread(&honor, nil)}), NodePools: split},
			wantZones: map[string]int{"us-west-2a": 2},
		},
		{
			name: "nodeTaintsPolicy Honor does not count pods on untolerated nodes",
			in: scheduling.Input{Pods: webPods(2, PodOptions{CPU: "1500m", Spread: zoneSpread(&honor, nil)}), NodePools: pools(NodePool("default")),
				Nodes: []scheduling.ExistingNode{{Node: Node(NodeOptions{Name: "n1", CPU: "1", Memory: "8Gi", Labels: map[string]string{scheduling.LabelZone: "us-west-2a"},
					Taints: []corev1.Taint{{Key: "dedicated", Effect: corev1.TaintEffectNoSchedule}}}), Initialized: true,
					Pods: []*corev1.Pod{Pod(PodOptions{Name: "old", NodeName: "n1", CPU: "100m", Labels: map[string]string{"app": "web"}})}}}},
			wantZones: map[string]int{"us-west-2a": 1, "us-west-2b": 1},
		},
		{
			name:      "nodeAffinityPolicy Honor (default) balances over the pod's own zones only",
			in:        scheduling.Input{Pods: webPods(2, PodOptions{CPU: "1500m", Spread: zoneSpread(nil, nil), NodeSelector: map[string]string{scheduling.LabelZone: "us-west-2b"}}), NodePools: pools(NodePool("default"))},
			wantZones: map[string]int{"us-west-2b": 2},
		},
		{
			name:          "nodeAffinityPolicy Ignore balances over every zone",
			in:            scheduling.Input{Pods: webPods(2, PodOptions{CPU: "1500m", Spread: zoneSpread(nil, &ignore), NodeSelector: map[string]string{scheduling.LabelZone: "us-west-2b"}}), NodePools: pools(NodePool("default"))},
			wantZones:     map[string]int{"us-west-2b": 1},
			unschedulable: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.InstanceTypes = SmallCatalog()
			plan, err := scheduling.Solve(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.wantZones, zoneCounts(plan, nil))
			assert.Len(t, plan.Unschedulable, tt.unschedulable)
		})
	}
}
