package scheduling

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// softTerms are the topology preferences a relaxation step still treats as required.
type softTerms struct {
	affinity, antiAffinity []corev1.PodAffinityTerm
	spread                 []corev1.TopologySpreadConstraint
}

func (s softTerms) empty() bool {
	return len(s.affinity) == 0 && len(s.antiAffinity) == 0 && len(s.spread) == 0
}

// buildSteps returns every relaxation step of a pod in Karpenter's order. All preferences start as
// requirements; each step gives one up: (1) the next required node-affinity OR-term, (2) the heaviest
// preferred pod-affinity term, (3) the heaviest preferred pod-anti-affinity term, (4) the heaviest
// preferred node-affinity term, (5) one ScheduleAnyway spread constraint, and finally (6) tolerating
// PreferNoSchedule taints when some NodePool has one. With ignorePreferences all preferences are
// dropped up front (PREFERENCE_POLICY=Ignore).
func buildSteps(pod *corev1.Pod, preferNoSchedule, ignorePreferences bool) ([]classStep, error) {
	if ignorePreferences {
		pod = withoutPreferences(pod)
	}
	nodeSteps, err := RelaxationSteps(pod, false)
	if err != nil {
		return nil, err
	}
	required := 1
	if aff := pod.Spec.Affinity; aff != nil && aff.NodeAffinity != nil && aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		required = max(1, len(aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms))
	}
	var soft softTerms
	if !ignorePreferences {
		soft = preferredTerms(pod)
	}
	var steps []classStep
	var given []string
	add := func(a Attempt, s softTerms, what string) {
		if what != "" {
			given = append(given, what)
		}
		a.Relaxed = strings.Join(given, "; ")
		steps = append(steps, classStep{Attempt: a, soft: s})
	}
	for i := range required {
		what := ""
		if i > 0 {
			what = fmt.Sprintf("required node affinity term %d", i-1)
		}
		add(nodeSteps[i], soft, what)
	}
	last := nodeSteps[required-1]
	for len(soft.affinity) > 0 {
		soft.affinity = soft.affinity[1:]
		add(last, soft, "a preferred pod affinity term")
	}
	for len(soft.antiAffinity) > 0 {
		soft.antiAffinity = soft.antiAffinity[1:]
		add(last, soft, "a preferred pod anti-affinity term")
	}
	for _, s := range nodeSteps[required:] {
		add(s, soft, "a preferred node affinity term")
		last = s
	}
	for len(soft.spread) > 0 {
		soft.spread = soft.spread[1:]
		add(last, soft, "a ScheduleAnyway topology spread constraint")
	}
	if preferNoSchedule {
		a := last
		a.TolerateAllPreferNoSchedule = true
		add(a, soft, "PreferNoSchedule taints")
	}
	for i := range steps {
		steps[i].sig = steps[i].Requirements.String()
		steps[i].base = steps[i].sig
		steps[i].own = steps[i].Requirements
	}
	return steps, nil
}

// preferredTerms lists a pod's topology preferences, heaviest first.
func preferredTerms(pod *corev1.Pod) softTerms {
	var s softTerms
	byWeight := func(ws []corev1.WeightedPodAffinityTerm) []corev1.PodAffinityTerm {
		sorted := slices.Clone(ws)
		slices.SortStableFunc(sorted, func(a, b corev1.WeightedPodAffinityTerm) int { return cmp.Compare(b.Weight, a.Weight) })
		out := make([]corev1.PodAffinityTerm, len(sorted))
		for i, w := range sorted {
			out[i] = w.PodAffinityTerm
		}
		return out
	}
	if a := pod.Spec.Affinity; a != nil {
		if a.PodAffinity != nil {
			s.affinity = byWeight(a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
		}
		if a.PodAntiAffinity != nil {
			s.antiAffinity = byWeight(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
		}
	}
	for _, tsc := range pod.Spec.TopologySpreadConstraints {
		if tsc.WhenUnsatisfiable == corev1.ScheduleAnyway {
			s.spread = append(s.spread, tsc)
		}
	}
	return s
}
