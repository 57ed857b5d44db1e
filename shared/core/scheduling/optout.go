package scheduling

import corev1 "k8s.io/api/core/v1"

// OptsOut reports whether the pod declines Karpenter's (and so Nodewright's) nodes: the node requirements
// Karpenter reads first — its nodeSelector, its first required node-affinity term and its heaviest
// preferred term, together — leave karpenter.sh/nodepool DoesNotExist (or allow it no value at all). Such
// a pod, a Karpenter controller replica say, is meant for other capacity: Karpenter ignores it without an
// Event, and so does Nodewright (no launch, no decision record, no FailedScheduling explanation).
// Expressions that do not parse are skipped here; ValidatePod refuses them.
func OptsOut(pod *corev1.Pod) bool {
	var req *Requirement
	add := func(r *Requirement) {
		if req == nil {
			req = r
		} else {
			req = req.Intersection(r)
		}
	}
	if v, ok := pod.Spec.NodeSelector[LabelNodePool]; ok {
		add(&Requirement{Key: LabelNodePool, values: []string{v}})
	}
	var terms []corev1.NodeSelectorTerm
	if aff := pod.Spec.Affinity; aff != nil && aff.NodeAffinity != nil {
		if r := aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution; r != nil && len(r.NodeSelectorTerms) > 0 {
			terms = append(terms, r.NodeSelectorTerms[0])
		}
		if preferred := aff.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution; len(preferred) > 0 {
			// The heaviest; among equal weights the first, as RelaxationSteps takes it.
			heaviest := preferred[0]
			for _, p := range preferred[1:] {
				if p.Weight > heaviest.Weight {
					heaviest = p
				}
			}
			terms = append(terms, heaviest.Preference)
		}
	}
	for _, t := range terms {
		for _, e := range t.MatchExpressions {
			if NormalizeLabel(e.Key) != LabelNodePool {
				continue
			}
			if r, err := NewRequirement(e.Key, Operator(e.Operator), e.Values...); err == nil {
				add(r)
			}
		}
	}
	return req != nil && req.Operator() == OpDoesNotExist
}
