package disruption_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/core/disruption"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
)

// A replacement is planned as provisioning would plan it: with PREFERENCE_POLICY=Respect a pod that
// prefers on-demand capacity gets an on-demand replacement, with Ignore the cheapest (spot).
func TestReplacementsFollowThePreferencePolicy(t *testing.T) {
	small := schedulingtest.SmallCatalog()
	web := pod("web", "2500m")
	web.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{
		Weight: 1, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{
			Key: scheduling.LabelCapacityType, Operator: corev1.NodeSelectorOpIn, Values: []string{scheduling.CapacityTypeOnDemand}}}}}}}}
	capacityTypes := func(ignore bool) []string {
		in := disruption.Input{Now: now, InstanceTypes: small, IgnorePreferences: ignore,
			NodePools: []disruption.NodePool{pool("default", unlimitedBudget, consolidateAfter(nil), amd64Only)},
			Nodes: []disruption.Node{drifted(node(small, nodeSpec{"old", "default", "medium", scheduling.CapacityTypeOnDemand,
				[]*corev1.Pod{web}}), "AMIDrift")}}
		cmd := decideOne(t, in)
		require.Len(t, cmd.Replacements, 1)
		for _, r := range cmd.Replacements[0].Requirements {
			if r.Key == scheduling.LabelCapacityType {
				return r.Values
			}
		}
		return nil
	}
	assert.Equal(t, []string{scheduling.CapacityTypeOnDemand}, capacityTypes(false), "Respect: the preference is met")
	assert.Contains(t, capacityTypes(true), scheduling.CapacityTypeSpot, "Ignore: the cheapest capacity")
}
