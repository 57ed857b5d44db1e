package scheduling_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
)

func TestRelaxationSteps(t *testing.T) {
	zoneA := schedulingtest.In(scheduling.LabelZone, "us-west-2a")
	zoneB := schedulingtest.In(scheduling.LabelZone, "us-west-2b")
	arm := schedulingtest.In(scheduling.LabelArch, "arm64")
	spot := schedulingtest.In(scheduling.LabelCapacityType, "spot")
	tests := []struct {
		name             string
		opts             schedulingtest.PodOptions
		preferNoSchedule bool
		want             []string // Requirements.String() per step
		wantTolerate     []bool
	}{
		{name: "no constraints", want: []string{""}, wantTolerate: []bool{false}},
		{name: "nodeSelector only", opts: schedulingtest.PodOptions{NodeSelector: map[string]string{"beta.kubernetes.io/arch": "arm64"}},
			want: []string{"kubernetes.io/arch In [arm64]"}},
		{name: "required OR-terms are tried in order", opts: schedulingtest.PodOptions{NodeRequirementTerms: [][]corev1.NodeSelectorRequirement{{zoneA}, {zoneB}}},
			want: []string{"topology.kubernetes.io/zone In [us-west-2a]", "topology.kubernetes.io/zone In [us-west-2b]"}},
		{name: "preferred terms are required first, heaviest first, then dropped", opts: schedulingtest.PodOptions{
			NodeRequirements: []corev1.NodeSelectorRequirement{arm},
			NodePreferences:  [][]corev1.NodeSelectorRequirement{{zoneB}, {spot}}, Weights: []int32{10, 50},
		}, want: []string{
			"karpenter.sh/capacity-type In [spot], kubernetes.io/arch In [arm64]",
			"kubernetes.io/arch In [arm64], topology.kubernetes.io/zone In [us-west-2b]",
			"kubernetes.io/arch In [arm64]",
		}},
		{name: "required terms are relaxed before preferred ones", opts: schedulingtest.PodOptions{
			NodeRequirementTerms: [][]corev1.NodeSelectorRequirement{{zoneA}, {zoneB}},
			NodePreferences:      [][]corev1.NodeSelectorRequirement{{spot}},
		}, want: []string{
			"karpenter.sh/capacity-type In [spot], topology.kubernetes.io/zone In [us-west-2a]",
			"karpenter.sh/capacity-type In [spot], topology.kubernetes.io/zone In [us-west-2b]",
			"topology.kubernetes.io/zone In [us-west-2b]",
		}},
		{name: "PreferNoSchedule taints are tolerated last", opts: schedulingtest.PodOptions{NodePreferences: [][]corev1.NodeSelectorRequirement{{spot}}}, preferNoSchedule: true,
			want: []string{"karpenter.sh/capacity-type In [spot]", "", ""}, wantTolerate: []bool{false, false, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			steps, err := scheduling.RelaxationSteps(schedulingtest.Pod(tt.opts), tt.preferNoSchedule)
			require.NoError(t, err)
			var got []string
			var tolerate []bool
			for _, s := range steps {
				got = append(got, s.Requirements.String())
				tolerate = append(tolerate, s.TolerateAllPreferNoSchedule)
			}
			assert.Equal(t, tt.want, got)
			if tt.wantTolerate != nil {
				assert.Equal(t, tt.wantTolerate, tolerate)
			}
			assert.Empty(t, steps[0].Relaxed)
		})
	}
}
