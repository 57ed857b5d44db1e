package scheduling_test

import (
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/core/scheduling"
	. "github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
)

func selector(app string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
}

func spread(key string, maxSkew int32, app string) []corev1.TopologySpreadConstraint {
	return []corev1.TopologySpreadConstraint{{MaxSkew: maxSkew, TopologyKey: key, WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: selector(app)}}
}

func withAffinity(pods []*corev1.Pod, aff *corev1.Affinity) []*corev1.Pod {
	for _, p := range pods {
		p.Spec.Affinity = aff
	}
	return pods
}

func antiAffinity(key, app string) *corev1.Affinity {
	return &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: key, LabelSelector: selector(app)}}}}
}

func affinity(key, app string) *corev1.Affinity {
	return &corev1.Affinity{PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: key, LabelSelector: selector(app)}}}}
}

// zoneCounts returns, per zone, how many pods the plan puts there (new claims and existing nodes).
func zoneCounts(plan *scheduling.Plan, nodeZones map[string]string) map[string]int {
	out := map[string]int{}
	for _, c := range plan.NewClaims {
		out[c.Zone] += len(c.Pods)
	}
	for _, n := range plan.ExistingNodes {
		out[nodeZones[n.Name]] += len(n.Pods)
	}
	return out
}

func webPods(n int, o PodOptions) []*corev1.Pod {
	o.Name, o.Owner = "web", "web"
	if o.Labels == nil {
		o.Labels = map[string]string{"app": "web"}
	}
	if o.CPU == "" {
		o.CPU = "100m"
	}
	return Pods(n, o)
}

func existingNode(name, zone, cpu string, pods ...*corev1.Pod) scheduling.ExistingNode {
	for _, p := range pods {
		p.Spec.NodeName = name
	}
	return scheduling.ExistingNode{Node: Node(NodeOptions{Name: name, CPU: cpu, Memory: "8Gi", Labels: map[string]string{scheduling.LabelZone: zone}}), Pods: pods, Initialized: true}
}

func TestTopology(t *testing.T) {
	defaultPool := pools(NodePool("default"))
	tests := []struct {
		name          string
		in            scheduling.Input
		wantZones     map[string]int
		wantClaims    int
		wantExisting  map[string][]string
		unschedulable int
		reasonHas     string
	}{
		{
			name:       "zone spread balances new claims across zones",
			in:         scheduling.Input{Pods: webPods(6, PodOptions{Spread: spread(scheduling.LabelZone, 1, "web")}), NodePools: defaultPool},
			wantZones:  map[string]int{"us-west-2a": 3, "us-west-2b": 3},
			wantClaims: 2,
		},
		{
			name: "zone spread counts running pods",
			in: scheduling.Input{Pods: webPods(2, PodOptions{Spread: spread(scheduling.LabelZone, 1, "web")}), NodePools: defaultPool,
				Nodes: []scheduling.ExistingNode{existingNode("n1", "us-west-2a", "1",
					Pod(PodOptions{Name: "old-1", CPU: "500m", Labels: map[string]string{"app": "web"}}), Pod(PodOptions{Name: "old-2", CPU: "500m", Labels: map[string]string{"app": "web"}}))}},
			wantZones:  map[string]int{"us-west-2b": 2},
			wantClaims: 1,
		},
		{
			name: "zone spread that no existing node can meet skips them for a new claim",
			in: scheduling.Input{Pods: webPods(2, PodOptions{Spread: spread(scheduling.LabelZone, 1, "web")}), NodePools: defaultPool,
				Nodes: []scheduling.ExistingNode{
					existingNode("n1", "us-west-2a", "4", Pod(PodOptions{Name: "old-1", CPU: "100m", Labels: map[string]string{"app": "web"}})),
					existingNode("n2", "us-west-2a", "4", Pod(PodOptions{Name: "old-2", CPU: "100m", Labels: map[string]string{"app": "web"}})),
					existingNode("n3", "us-west-2a", "4")}},
			wantZones:  map[string]int{"us-west-2b": 2},
			wantClaims: 1,
		},
		{
			name: "zone spread lands on the existing node in the zone it needs",
			in: scheduling.Input{Pods: webPods(2, PodOptions{Spread: spread(scheduling.LabelZone, 1, "web")}), NodePools: defaultPool,
				Nodes: []scheduling.ExistingNode{
					existingNode("n1", "us-west-2a", "4", Pod(PodOptions{Name: "old-1", CPU: "100m", Labels: map[string]string{"app": "web"}})),
					existingNode("n2", "us-west-2a", "4", Pod(PodOptions{Name: "old-2", CPU: "100m", Labels: map[string]string{"app": "web"}})),
					existingNode("n3", "us-west-2b", "4")}},
			wantZones:    map[string]int{"us-west-2b": 2},
			wantExisting: map[string][]string{"n3": {"default/web-0", "default/web-1"}},
		},
		{
			name:       "a zone requirement limits the spread's domains (nodeAffinityPolicy Honor)",
			in:         scheduling.Input{Pods: webPods(4, PodOptions{Spread: spread(scheduling.LabelZone, 1, "web"), NodeSelector: map[string]string{scheduling.LabelZone: "us-west-2b"}}), NodePools: defaultPool},
			wantZones:  map[string]int{"us-west-2b": 4},
			wantClaims: 1,
		},
		{
			name: "minDomains above the zone count keeps the minimum at zero",
			in: scheduling.Input{Pods: webPods(3, PodOptions{Spread: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: scheduling.LabelZone,
				WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: selector("web"), MinDomains: ptr(int32(3))}}}), NodePools: defaultPool},
			wantZones:     map[string]int{"us-west-2a": 1, "us-west-2b": 1},
			wantClaims:    2,
			unschedulable: 1,
			reasonHas:     "no zone satisfies",
		},
		{
			name:       "hostname spread puts one pod per node",
			in:         scheduling.Input{Pods: webPods(3, PodOptions{Spread: spread(scheduling.LabelHostname, 1, "web")}), NodePools: defaultPool},
			wantClaims: 3,
		},
		{
			name:       "hostname spread with maxSkew 2 puts two pods per node",
			in:         scheduling.Input{Pods: webPods(4, PodOptions{Spread: spread(scheduling.LabelHostname, 2, "web")}), NodePools: defaultPool},
			wantClaims: 2,
		},
		{
			name:       "hostname anti-affinity separates replicas",
			in:         scheduling.Input{Pods: withAffinity(webPods(3, PodOptions{}), antiAffinity(scheduling.LabelHostname, "web")), NodePools: defaultPool},
			wantClaims: 3,
		},
		{
			name: "hostname anti-affinity avoids a node running a matching pod",
			in: scheduling.Input{Pods: withAffinity(webPods(1, PodOptions{}), antiAffinity(scheduling.LabelHostname, "web")), NodePools: defaultPool,
				Nodes: []scheduling.ExistingNode{existingNode("n1", "us-west-2a", "4", Pod(PodOptions{Name: "old", CPU: "100m", Labels: map[string]string{"app": "web"}}))}},
			wantClaims: 1,
		},
		{
			name: "a running pod's anti-affinity keeps matching pods away (inverse anti-affinity)",
			in: scheduling.Input{Pods: webPods(1, PodOptions{}), NodePools: defaultPool,
				Nodes: []scheduling.ExistingNode{existingNode("n1", "us-west-2a", "4", withAffinity([]*corev1.Pod{Pod(PodOptions{Name: "loner", CPU: "100m"})}, antiAffinity(scheduling.LabelHostname, "web"))...)}},
			wantClaims: 1,
		},
		{
			name:          "zone anti-affinity runs out of zones",
			in:            scheduling.Input{Pods: withAffinity(webPods(3, PodOptions{}), antiAffinity(scheduling.LabelZone, "web")), NodePools: defaultPool},
			wantZones:     map[string]int{"us-west-2a": 1, "us-west-2b": 1},
			wantClaims:    2,
			unschedulable: 1,
			reasonHas:     "no zone satisfies",
		},
		{
			name: "zone affinity follows the matching pods",
			in: scheduling.Input{Pods: withAffinity(webPods(2, PodOptions{}), affinity(scheduling.LabelZone, "db")), NodePools: defaultPool,
				Nodes: []scheduling.ExistingNode{existingNode("n1", "us-west-2b", "600m", Pod(PodOptions{Name: "db", CPU: "500m", Labels: map[string]string{"app": "db"}}))}},
			// n1 has room for one; the other follows to a new node in the same zone.
			wantZones:    map[string]int{"us-west-2b": 2},
			wantClaims:   1,
			wantExisting: map[string][]string{"n1": {"default/web-0"}},
		},
		{
			name: "hostname affinity joins the matching pod's node",
			in: scheduling.Input{Pods: withAffinity(webPods(2, PodOptions{}), affinity(scheduling.LabelHostname, "cache")), NodePools: defaultPool,
				Nodes: []scheduling.ExistingNode{existingNode("n1", "us-west-2a", "4", Pod(PodOptions{Name: "cache", CPU: "500m", Labels: map[string]string{"app": "cache"}}))}},
			wantExisting: map[string][]string{"n1": {"default/web-0", "default/web-1"}},
		},
		{
			name:          "hostname affinity without a matching pod anywhere is unschedulable",
			in:            scheduling.Input{Pods: withAffinity(webPods(1, PodOptions{}), affinity(scheduling.LabelHostname, "cache")), NodePools: defaultPool},
			unschedulable: 1,
			reasonHas:     "required pod affinity on hostname",
		},
		{
			name:       "self-affinity on hostname packs replicas together",
			in:         scheduling.Input{Pods: withAffinity(webPods(3, PodOptions{}), affinity(scheduling.LabelHostname, "web")), NodePools: defaultPool},
			wantClaims: 1,
		},
		{
			name: "matchLabelKeys keeps revisions apart",
			in: scheduling.Input{Pods: append(
				Pods(2, PodOptions{Name: "v1", Owner: "v1", CPU: "100m", Labels: map[string]string{"app": "web", "rev": "1"},
					Spread: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: scheduling.LabelHostname, WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: selector("web"), MatchLabelKeys: []string{"rev"}}}}),
				Pods(2, PodOptions{Name: "v2", Owner: "v2", CPU: "100m", Labels: map[string]string{"app": "web", "rev": "2"},
					Spread: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: scheduling.LabelHostname, WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: selector("web"), MatchLabelKeys: []string{"rev"}}}})...),
				NodePools: defaultPool},
			wantClaims: 2, // one v1 and one v2 pod per node
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.InstanceTypes = SmallCatalog()
			plan, err := scheduling.Solve(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.wantClaims, len(plan.NewClaims), "claims")
			assert.Len(t, plan.Unschedulable, tt.unschedulable)
			if tt.reasonHas != "" && assert.NotEmpty(t, plan.Unschedulable) {
				assert.Contains(t, plan.Unschedulable[0].Reason, tt.reasonHas)
			}
			if tt.wantZones != nil {
				nodeZones := map[string]string{}
				for _, n := range tt.in.Nodes {
					nodeZones[n.Node.Name] = n.Node.Labels[scheduling.LabelZone]
				}
				assert.Equal(t, tt.wantZones, zoneCounts(plan, nodeZones))
			}
			existing := map[string][]string{}
			for _, n := range plan.ExistingNodes {
				existing[n.Name] = n.PodNames
			}
			if tt.wantExisting == nil {
				tt.wantExisting = map[string][]string{}
			}
			assert.Equal(t, tt.wantExisting, existing)
		})
	}
}

func TestTopologyRevisionsShareNodes(t *testing.T) {
	// With matchLabelKeys each revision spreads on its own: every node holds one pod of each.
	mk := func(rev string) []*corev1.Pod {
		return Pods(2, PodOptions{Name: "v" + rev, Owner: "v" + rev, CPU: "100m", Labels: map[string]string{"app": "web", "rev": rev},
			Spread: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: scheduling.LabelHostname, WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: selector("web"), MatchLabelKeys: []string{"rev"}}}})
	}
	plan, err := scheduling.Solve(scheduling.Input{Pods: append(mk("1"), mk("2")...), NodePools: pools(NodePool("default")), InstanceTypes: SmallCatalog()})
	require.NoError(t, err)
	require.Len(t, plan.NewClaims, 2)
	for _, c := range plan.NewClaims {
		names := append([]string(nil), c.PodNames...)
		sort.Strings(names)
		require.Len(t, names, 2)
		assert.NotEqual(t, names[0][:10], names[1][:10], "one pod of each revision per node: %v", names)
	}
}

func ptr[T any](v T) *T { return &v }

func TestTopologyOnExistingNodesKeepsEveryPod(t *testing.T) {
	// Hostname spread over two roomy nodes: two pods land on the nodes, the third needs a new claim.
	pods := webPods(3, PodOptions{Spread: spread(scheduling.LabelHostname, 1, "web")})
	plan, err := scheduling.Solve(scheduling.Input{Pods: pods, NodePools: pools(NodePool("default")), InstanceTypes: SmallCatalog(),
		Nodes: []scheduling.ExistingNode{existingNode("n1", "us-west-2a", "4"), existingNode("n2", "us-west-2b", "4")}})
	require.NoError(t, err)
	var placed []string
	for _, n := range plan.ExistingNodes {
		require.Len(t, n.PodNames, 1, n.Name)
		placed = append(placed, n.PodNames...)
	}
	require.Len(t, plan.NewClaims, 1)
	placed = append(placed, plan.NewClaims[0].PodNames...)
	sort.Strings(placed)
	assert.Equal(t, []string{"default/web-0", "default/web-1", "default/web-2"}, placed)
}

// TestKarpenterMixInvariants checks the topology rules on Karpenter's benchmark mix: hostname
// anti-affinity and hostname spread (maxSkew 1) put at most one pod of their group on a node, zone
// spread stays within skew 1, and zone self-affinity keeps its group in one zone.
func TestKarpenterMixInvariants(t *testing.T) {
	pods := KarpenterMix(1000, 9)
	plan, err := scheduling.Solve(scheduling.Input{Pods: pods, NodePools: pools(NodePool("default")), InstanceTypes: InstanceTypes(400)})
	require.NoError(t, err)
	require.Empty(t, plan.Unschedulable)
	zones := map[string]map[string]int{}
	for _, c := range plan.NewClaims {
		perNode := map[string]int{}
		for _, p := range c.Pods {
			app := p.Labels["app"]
			perNode[app]++
			if zones[app] == nil {
				zones[app] = map[string]int{}
			}
			zones[app][c.Zone]++
		}
		assert.LessOrEqual(t, perNode["anti-host"], 1, c.Name)
		assert.LessOrEqual(t, perNode["spread-host"], 1, c.Name)
	}
	assert.Len(t, zones["affinity-zone"], 1, "zone self-affinity keeps one zone: %v", zones["affinity-zone"])
	spreadZones := zones["spread-zone"]
	require.Len(t, spreadZones, len(Zones))
	lo, hi := 1<<30, 0
	for _, n := range spreadZones {
		lo, hi = min(lo, n), max(hi, n)
	}
	assert.LessOrEqual(t, hi-lo, 1, "zone spread skew: %v", spreadZones)
	antiHost := 0
	for _, n := range zones["anti-host"] {
		antiHost += n
	}
	assert.Equal(t, 200, antiHost, "every anti-affinity pod is placed")
}

func TestKarpenterMixIsDeterministic(t *testing.T) {
	pods := KarpenterMix(300, 5)
	in := scheduling.Input{Pods: pods, NodePools: pools(NodePool("default")), InstanceTypes: InstanceTypes(100)}
	first, err := scheduling.Solve(in)
	require.NoError(t, err)
	reversed := append([]*corev1.Pod(nil), pods...)
	for i, j := 0, len(reversed)-1; i < j; i, j = i+1, j-1 {
		reversed[i], reversed[j] = reversed[j], reversed[i]
	}
	in.Pods = reversed
	second, err := scheduling.Solve(in)
	require.NoError(t, err)
	assert.Equal(t, claimSummary(first), claimSummary(second))
}

func claimSummary(p *scheduling.Plan) []string {
	var out []string
	for _, c := range p.NewClaims {
		out = append(out, c.Name+" "+c.InstanceType+" "+c.Zone+" "+strings.Join(c.PodNames, ","))
	}
	return out
}

func softSpread(key string, app string) []corev1.TopologySpreadConstraint {
	return []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: key, WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: selector(app)}}
}

func TestTopologyPreferences(t *testing.T) {
	preferredAnti := &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{
		{Weight: 10, PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: scheduling.LabelHostname, LabelSelector: selector("web")}}}}}
	preferredZoneAffinity := &corev1.Affinity{PodAffinity: &corev1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{
		{Weight: 10, PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: scheduling.LabelZone, LabelSelector: selector("db")}}}}}
	tests := []struct {
		name       string
		in         scheduling.Input
		wantClaims int
		wantZones  map[string]int
	}{
		{
			name:       "a ScheduleAnyway hostname spread is honoured when it can be",
			in:         scheduling.Input{Pods: webPods(3, PodOptions{Spread: softSpread(scheduling.LabelHostname, "web")}), NodePools: pools(NodePool("default"))},
			wantClaims: 3,
		},
		{
			name:       "a ScheduleAnyway hostname spread is relaxed when the nodes limit bites",
			in:         scheduling.Input{Pods: webPods(3, PodOptions{Spread: softSpread(scheduling.LabelHostname, "web")}), NodePools: pools(NodePool("default", Limits("nodes", "2")))},
			wantClaims: 2,
		},
		{
			name:       "a ScheduleAnyway zone spread balances zones",
			in:         scheduling.Input{Pods: webPods(4, PodOptions{Spread: softSpread(scheduling.LabelZone, "web")}), NodePools: pools(NodePool("default"))},
			wantClaims: 2,
			wantZones:  map[string]int{"us-west-2a": 2, "us-west-2b": 2},
		},
		{
			name:       "preferred hostname anti-affinity separates replicas when it can",
			in:         scheduling.Input{Pods: withAffinity(webPods(2, PodOptions{}), preferredAnti), NodePools: pools(NodePool("default"))},
			wantClaims: 2,
		},
		{
			name:       "preferred hostname anti-affinity gives way to the nodes limit",
			in:         scheduling.Input{Pods: withAffinity(webPods(2, PodOptions{}), preferredAnti), NodePools: pools(NodePool("default", Limits("nodes", "1")))},
			wantClaims: 1,
		},
		{
			name: "preferred zone affinity follows the matching pods",
			in: scheduling.Input{Pods: withAffinity(webPods(2, PodOptions{CPU: "1"}), preferredZoneAffinity), NodePools: pools(NodePool("default")),
				Nodes: []scheduling.ExistingNode{existingNode("n1", "us-west-2b", "600m", Pod(PodOptions{Name: "db", CPU: "500m", Labels: map[string]string{"app": "db"}}))}},
			wantClaims: 1,
			wantZones:  map[string]int{"us-west-2b": 2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.InstanceTypes = SmallCatalog()
			plan, err := scheduling.Solve(tt.in)
			require.NoError(t, err)
			assert.Empty(t, plan.Unschedulable)
			assert.Equal(t, tt.wantClaims, len(plan.NewClaims), "claims")
			if tt.wantZones != nil {
				assert.Equal(t, tt.wantZones, zoneCounts(plan, nil))
			}
		})
	}
}
