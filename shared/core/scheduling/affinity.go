package scheduling

import (
	"cmp"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// Attempt is what a pod asks of a node at one step of preference relaxation.
type Attempt struct {
	// Requirements combine the nodeSelector, one required node-affinity term and, while any remain,
	// the heaviest remaining preferred node-affinity term (treated as required).
	Requirements Requirements
	// TolerateAllPreferNoSchedule is set on the last step, when the pod may land on nodes with
	// PreferNoSchedule taints it does not tolerate.
	TolerateAllPreferNoSchedule bool
	// Relaxed describes what this step gave up compared with the pod as written, empty for the first.
	Relaxed string
}

// RelaxationSteps returns the attempts the solver makes for a pod, in Karpenter's order: the pod with
// its first required node-affinity term and heaviest preferred term; then each further required term
// in turn (the earlier ones dropped); then the preferred terms dropped one by one, heaviest first; and
// finally, when preferNoScheduleTaints is true (some NodePool carries such a taint), a step that
// tolerates every PreferNoSchedule taint. Pod affinity and topology-spread preferences are relaxed by
// the topology code, not here.
func RelaxationSteps(pod *corev1.Pod, preferNoScheduleTaints bool) ([]Attempt, error) {
	base := make(Requirements, len(pod.Spec.NodeSelector))
	for _, k := range sortedKeys(pod.Spec.NodeSelector) {
		base.Add(&Requirement{Key: NormalizeLabel(k), values: []string{pod.Spec.NodeSelector[k]}})
	}
	required := []Requirements{{}}
	var preferred []weightedTerm
	if aff := pod.Spec.Affinity; aff != nil && aff.NodeAffinity != nil {
		if r := aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution; r != nil && len(r.NodeSelectorTerms) > 0 {
			required = required[:0]
			for _, t := range r.NodeSelectorTerms {
				reqs, err := RequirementsFromNodeSelector(t)
				if err != nil {
					return nil, fmt.Errorf("required node affinity: %w", err)
				}
				required = append(required, reqs)
			}
		}
		for i, p := range aff.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
			reqs, err := RequirementsFromNodeSelector(p.Preference)
			if err != nil {
				return nil, fmt.Errorf("preferred node affinity: %w", err)
			}
			preferred = append(preferred, weightedTerm{weight: p.Weight, index: i, reqs: reqs})
		}
		// Heaviest first; equal weights keep the pod's order.
		slices.SortStableFunc(preferred, func(a, b weightedTerm) int { return cmp.Compare(b.weight, a.weight) })
	}
	build := func(req Requirements, pref *weightedTerm) Requirements {
		out := base.Intersection(req)
		if pref != nil {
			out.AddAll(pref.reqs)
		}
		return out
	}
	var steps []Attempt
	var firstPref *weightedTerm
	if len(preferred) > 0 {
		firstPref = &preferred[0]
	}
	for i, req := range required {
		relaxed := ""
		if i > 0 {
			relaxed = fmt.Sprintf("dropped required node affinity terms 0..%d", i-1)
		}
		steps = append(steps, Attempt{Requirements: build(req, firstPref), Relaxed: relaxed})
	}
	last := required[len(required)-1]
	for i := 1; i <= len(preferred); i++ {
		var pref *weightedTerm
		if i < len(preferred) {
			pref = &preferred[i]
		}
		steps = append(steps, Attempt{
			Requirements: build(last, pref),
			Relaxed:      fmt.Sprintf("dropped the %d heaviest preferred node affinity term(s)", i),
		})
	}
	if preferNoScheduleTaints {
		final := steps[len(steps)-1]
		relaxed := "tolerated PreferNoSchedule taints"
		if final.Relaxed != "" {
			relaxed = final.Relaxed + "; " + relaxed
		}
		steps = append(steps, Attempt{Requirements: final.Requirements, TolerateAllPreferNoSchedule: true, Relaxed: relaxed})
	}
	return steps, nil
}

type weightedTerm struct {
	weight int32
	index  int
	reqs   Requirements
}
