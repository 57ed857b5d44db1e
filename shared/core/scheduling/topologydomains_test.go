package scheduling_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/core/scheduling"
	. "github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
)

// labelCounts returns, per value of a label of the claims' requirements (or, for capacity type, the
// launch choice), how many pods the plan puts there.
func labelCounts(plan *scheduling.Plan, key string) map[string]int {
	out := map[string]int{}
	for _, c := range plan.NewClaims {
		v := ""
		switch key {
		case scheduling.LabelCapacityType:
			v = c.CapacityType
		case scheduling.LabelZone:
			v = c.Zone
		default:
			for _, r := range c.Requirements {
				if r.Key == key && r.Operator == scheduling.OpIn && len(r.Values) == 1 {
					v = r.Values[0]
				}
			}
		}
		out[v] += len(c.Pods)
	}
	return out
}

func TestTopologyKeysBeyondZoneAndHostname(t *testing.T) {
	team := "example.com/team"
	teams := pools(NodePool("team-a", Labels(map[string]string{team: "a"})), NodePool("team-b", Labels(map[string]string{team: "b"})))
	// 1.5 CPU pods: one per small node, so placements show in the claims.
	big := PodOptions{CPU: "1500m", Memory: "1Gi"}
	tests := []struct {
		name          string
		in            scheduling.Input
		key           string
		want          map[string]int
		unschedulable int
		reasonHas     string
	}{
		{
			name: "capacity-type spread splits replicas between spot and on-demand",
			in:   scheduling.Input{Pods: webPods(4, PodOptions{CPU: big.CPU, Memory: big.Memory, Spread: spread(scheduling.LabelCapacityType, 1, "web")}), NodePools: pools(NodePool("default"))},
			key:  scheduling.LabelCapacityType,
			want: map[string]int{scheduling.CapacityTypeSpot: 2, scheduling.CapacityTypeOnDemand: 2},
		},
		{
			name: "a capacity-type requirement limits the spread's domains (nodeAffinityPolicy Honor)",
			in: scheduling.Input{Pods: webPods(3, PodOptions{CPU: big.CPU, Memory: big.Memory, Spread: spread(scheduling.LabelCapacityType, 1, "web"),
				NodeSelector: map[string]string{scheduling.LabelCapacityType: scheduling.CapacityTypeSpot}}), NodePools: pools(NodePool("default"))},
			key:  scheduling.LabelCapacityType,
			want: map[string]int{scheduling.CapacityTypeSpot: 3},
		},
		{
			name: "spread over a custom NodePool label balances the pools",
			in:   scheduling.Input{Pods: webPods(4, PodOptions{CPU: big.CPU, Memory: big.Memory, Spread: spread(team, 1, "web")}), NodePools: teams},
			key:  team,
			want: map[string]int{"a": 2, "b": 2},
		},
		{
			name: "instance-family anti-affinity puts replicas on different families",
			in:   scheduling.Input{Pods: withAffinity(webPods(3, PodOptions{CPU: "500m"}), antiAffinity(scheduling.LabelInstanceFamily, "web")), NodePools: pools(NodePool("default"))},
			key:  scheduling.LabelInstanceFamily,
			want: map[string]int{"small": 1, "arm-medium": 1, "medium": 1}, // the three cheapest
		},
		{
			name: "capacity-type affinity follows a running pod",
			in: scheduling.Input{Pods: withAffinity(webPods(2, PodOptions{CPU: big.CPU}), affinity(scheduling.LabelCapacityType, "db")), NodePools: pools(NodePool("default")),
				Nodes: []scheduling.ExistingNode{{Node: Node(NodeOptions{Name: "n1", CPU: "1", Memory: "8Gi", Labels: map[string]string{scheduling.LabelCapacityType: scheduling.CapacityTypeOnDemand}}),
					Pods: []*corev1.Pod{Pod(PodOptions{Name: "db", CPU: "500m", NodeName: "n1", Labels: map[string]string{"app": "db"}})}, Initialized: true}}},
			key:  scheduling.LabelCapacityType,
			want: map[string]int{scheduling.CapacityTypeOnDemand: 2},
		},
		{
			name: "zone and capacity-type spread together",
			in: scheduling.Input{Pods: webPods(4, PodOptions{CPU: big.CPU, Memory: big.Memory,
				Spread: append(spread(scheduling.LabelZone, 1, "web"), spread(scheduling.LabelCapacityType, 1, "web")...)}), NodePools: pools(NodePool("default"))},
			key:  scheduling.LabelCapacityType,
			want: map[string]int{scheduling.CapacityTypeSpot: 2, scheduling.CapacityTypeOnDemand: 2},
		},
		{
			name: "an existing node without the spread's key is in no domain",
			in: scheduling.Input{Pods: webPods(2, PodOptions{Spread: spread(team, 1, "web")}), NodePools: teams,
				Nodes: []scheduling.ExistingNode{{Node: Node(NodeOptions{Name: "unlabelled", CPU: "8", Memory: "16Gi"}), Initialized: true}}},
			key:  team,
			want: map[string]int{"a": 1, "b": 1},
		},
		{
			name:          "custom-label anti-affinity runs out of domains",
			in:            scheduling.Input{Pods: withAffinity(webPods(3, PodOptions{}), antiAffinity(team, "web")), NodePools: teams},
			key:           team,
			want:          map[string]int{"a": 1, "b": 1},
			unschedulable: 1,
			reasonHas:     "no example.com/team domain satisfies",
		},
		{
			name:          "a key no NodePool defines is unsupported, not ignored",
			in:            scheduling.Input{Pods: withAffinity(webPods(1, PodOptions{}), antiAffinity(team, "web")), NodePools: pools(NodePool("default"))},
			key:           team,
			want:          map[string]int{},
			unschedulable: 1,
			reasonHas:     `topology key "example.com/team" is not supported: no NodePool, instance type or node defines values for it`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.InstanceTypes = SmallCatalog()
			plan, err := scheduling.Solve(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, labelCounts(plan, tt.key))
			assert.Len(t, plan.Unschedulable, tt.unschedulable)
			if tt.reasonHas != "" && assert.NotEmpty(t, plan.Unschedulable) {
				assert.Contains(t, plan.Unschedulable[0].Reason, tt.reasonHas)
			}
		})
	}
}

func TestZoneAndCapacityTypeSpreadBalancesBoth(t *testing.T) {
	pods := webPods(4, PodOptions{CPU: "1500m", Memory: "1Gi",
		Spread: append(spread(scheduling.LabelZone, 1, "web"), spread(scheduling.LabelCapacityType, 1, "web")...)})
	plan, err := scheduling.Solve(scheduling.Input{Pods: pods, NodePools: pools(NodePool("default")), InstanceTypes: SmallCatalog()})
	require.NoError(t, err)
	assert.Empty(t, plan.Unschedulable)
	assert.Equal(t, map[string]int{"us-west-2a": 2, "us-west-2b": 2}, labelCounts(plan, scheduling.LabelZone))
	assert.Equal(t, map[string]int{scheduling.CapacityTypeSpot: 2, scheduling.CapacityTypeOnDemand: 2}, labelCounts(plan, scheduling.LabelCapacityType))
}
