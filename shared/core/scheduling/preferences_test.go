package scheduling

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

func TestBuildStepsOrder(t *testing.T) {
	term := func(key string) corev1.NodeSelectorTerm {
		return corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: LabelZone, Operator: corev1.NodeSelectorOpIn, Values: []string{key}}}}
	}
	podTerm := func(key string) corev1.PodAffinityTerm { return corev1.PodAffinityTerm{TopologyKey: key} }
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		Affinity: &corev1.Affinity{
			NodeAffinity: &corev1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution:  &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{term("a"), term("b")}},
				PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 1, Preference: term("b")}},
			},
			PodAffinity: &corev1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{
				{Weight: 1, PodAffinityTerm: podTerm("light")}, {Weight: 9, PodAffinityTerm: podTerm("heavy")},
			}},
			PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 5, PodAffinityTerm: podTerm("anti")}}},
		},
		TopologySpreadConstraints: []corev1.TopologySpreadConstraint{
			{TopologyKey: LabelZone, WhenUnsatisfiable: corev1.ScheduleAnyway},
			{TopologyKey: LabelHostname, WhenUnsatisfiable: corev1.DoNotSchedule},
		},
	}}
	steps, err := buildSteps(pod, true, false)
	require.NoError(t, err)
	type view struct {
		zone              string
		aff, anti, spread int
		tolerate          bool
	}
	var got []view
	for _, s := range steps {
		got = append(got, view{s.Requirements.Get(LabelZone).String(), len(s.soft.affinity), len(s.soft.antiAffinity), len(s.soft.spread), s.TolerateAllPreferNoSchedule})
	}
	assert.Equal(t, []view{
		{"topology.kubernetes.io/zone DoesNotExist", 2, 1, 1, false}, // required term a ∩ preferred b
		{"topology.kubernetes.io/zone In [b]", 2, 1, 1, false},       // required term b (∩ preferred b)
		{"topology.kubernetes.io/zone In [b]", 1, 1, 1, false},       // heavy pod affinity dropped
		{"topology.kubernetes.io/zone In [b]", 0, 1, 1, false},       // light pod affinity dropped
		{"topology.kubernetes.io/zone In [b]", 0, 0, 1, false},       // anti-affinity dropped
		{"topology.kubernetes.io/zone In [b]", 0, 0, 1, false},       // preferred node term dropped
		{"topology.kubernetes.io/zone In [b]", 0, 0, 0, false},       // ScheduleAnyway spread dropped
		{"topology.kubernetes.io/zone In [b]", 0, 0, 0, true},        // PreferNoSchedule tolerated
	}, got)
	assert.Equal(t, "heavy", steps[0].soft.affinity[0].TopologyKey, "heaviest first")
	assert.Equal(t, "light", steps[2].soft.affinity[0].TopologyKey)
	assert.Equal(t, "required node affinity term 0; a preferred pod affinity term; a preferred pod affinity term; a preferred pod anti-affinity term; a preferred node affinity term; a ScheduleAnyway topology spread constraint; PreferNoSchedule taints", steps[7].Relaxed)

	ignored, err := buildSteps(pod, false, true)
	require.NoError(t, err)
	require.Len(t, ignored, 2, "PREFERENCE_POLICY=Ignore keeps only the required OR-terms")
	assert.True(t, ignored[0].soft.empty())
}
