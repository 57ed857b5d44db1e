package scheduling_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/core/scheduling"
	. "github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
)

// repackInput mixes zone-spread deployments, which the re-packing moves between claims of the same
// zone, with pods it must leave where they are: hostname anti-affinity and host ports.
func repackInput() scheduling.Input {
	pods := zoneSpread(DeploymentPods(MixedWorkload(5)))
	for i := range 12 {
		p := Pod(PodOptions{Name: fmt.Sprintf("solo-%d", i), Owner: "solo", CPU: "1", Memory: "2Gi", Labels: map[string]string{"app": "solo"}})
		p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			TopologyKey: scheduling.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "solo"}}}}}}
		pods = append(pods, p)
	}
	pods = append(pods, Pods(8, PodOptions{Name: "ported", Owner: "ported", CPU: "500m", Memory: "1Gi", HostPorts: []int32{8080}, Labels: map[string]string{"app": "ported"}})...)
	return scheduling.Input{Pods: pods, NodePools: pools(NodePool("default")), InstanceTypes: RealisticInstanceTypes()}
}

// TestRepackKeepsTopologyRules checks that re-packed plans keep every rule: each pod placed once, zone
// spread within maxSkew 1 per deployment, one anti-affinity pod and one host-port pod per node, and
// every instance-type option of a claim holding its pods.
func TestRepackKeepsTopologyRules(t *testing.T) {
	in := repackInput()
	plan, err := scheduling.Solve(in)
	require.NoError(t, err)
	require.Empty(t, plan.Unschedulable)
	types := map[string]*scheduling.InstanceType{}
	for _, it := range in.InstanceTypes {
		types[it.Name] = it
	}
	seen := map[string]int{}
	zones := map[string]map[string]int{}
	repacked := 0
	for _, c := range plan.NewClaims {
		if strings.Contains(c.Why, "re-packed") {
			repacked++
		}
		perNode := map[string]int{}
		for _, p := range c.Pods {
			seen[p.Name]++
			app := p.Labels["app"]
			perNode[app]++
			if zones[app] == nil {
				zones[app] = map[string]int{}
			}
			zones[app][c.Zone]++
		}
		assert.LessOrEqual(t, perNode["solo"], 1, "%s: hostname anti-affinity", c.Name)
		assert.LessOrEqual(t, perNode["ported"], 1, "%s: host port", c.Name)
		for _, name := range c.InstanceTypeOptions {
			assert.True(t, c.Requests.Fits(types[name].Allocatable), "%s: %s on %s", c.Name, c.Requests, name)
		}
	}
	assert.Positive(t, repacked, "the zone-spread claims are re-packed")
	assert.Len(t, seen, len(in.Pods))
	for name, n := range seen {
		assert.Equal(t, 1, n, name)
	}
	for _, d := range MixedWorkload(5) {
		counts := zones[d.Name]
		require.Len(t, counts, len(Zones), d.Name)
		var n []int
		for _, c := range counts {
			n = append(n, c)
		}
		assert.LessOrEqual(t, slices.Max(n)-slices.Min(n), 1, "%s zone spread: %v", d.Name, counts)
	}
}

func TestRepackIsDeterministic(t *testing.T) {
	in := repackInput()
	first, err := scheduling.Solve(in)
	require.NoError(t, err)
	in.Pods = slices.Clone(in.Pods)
	slices.Reverse(in.Pods)
	in.InstanceTypes = slices.Clone(in.InstanceTypes)
	slices.Reverse(in.InstanceTypes)
	second, err := scheduling.Solve(in)
	require.NoError(t, err)
	assert.Equal(t, claimSummary(first), claimSummary(second))
}
