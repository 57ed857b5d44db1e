package disruption

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// pdbs answers whether PodDisruptionBudgets let a pod be evicted now. It remembers each pod's
// answer: Sequence asks again for every pod after every command, of the same PDBs.
type pdbs struct {
	byNamespace map[string][]pdbEntry
	answered    map[*corev1.Pod]string
}

type pdbEntry struct {
	pdb *policyv1.PodDisruptionBudget
	// sel is nil when the PDB selects nothing (no selector); invalid is set when the selector cannot
	// be read, and then the PDB is taken to cover every pod of its namespace.
	sel     labels.Selector
	invalid bool
}

func newPDBs(list []*policyv1.PodDisruptionBudget) *pdbs {
	sorted := slices.Clone(list)
	slices.SortFunc(sorted, func(a, b *policyv1.PodDisruptionBudget) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	out := &pdbs{byNamespace: map[string][]pdbEntry{}, answered: map[*corev1.Pod]string{}}
	for _, p := range sorted {
		e := pdbEntry{pdb: p}
		if p.Spec.Selector != nil {
			sel, err := metav1.LabelSelectorAsSelector(p.Spec.Selector)
			if err != nil {
				e.invalid = true
			} else {
				e.sel = sel
			}
		}
		out.byNamespace[p.Namespace] = append(out.byNamespace[p.Namespace], e)
	}
	return out
}

// blocks returns why the pod cannot be evicted now, or "": a pod covered by more than one PDB
// cannot be evicted at all (the eviction API refuses it), and a PDB whose status allows no
// disruption blocks its pods, except unready pods under unhealthyPodEvictionPolicy AlwaysAllow.
func (x *pdbs) blocks(pod *corev1.Pod) string {
	why, ok := x.answered[pod]
	if !ok {
		why = x.judge(pod)
		x.answered[pod] = why
	}
	return why
}

// judge is blocks' answer, not remembered.
func (x *pdbs) judge(pod *corev1.Pod) string {
	var covering []pdbEntry
	for _, e := range x.byNamespace[pod.Namespace] {
		if e.invalid || (e.sel != nil && e.sel.Matches(labels.Set(pod.Labels))) {
			covering = append(covering, e)
		}
	}
	switch {
	case len(covering) == 0:
		return ""
	case len(covering) > 1:
		names := make([]string, len(covering))
		for i, e := range covering {
			names[i] = e.pdb.Name
		}
		return fmt.Sprintf("pod %s is covered by more than one PodDisruptionBudget (%s), so it cannot be evicted", podKey(pod), strings.Join(names, ", "))
	}
	e := covering[0]
	if e.invalid {
		return fmt.Sprintf("PodDisruptionBudget %s/%s has a selector that cannot be read", e.pdb.Namespace, e.pdb.Name)
	}
	if e.pdb.Status.DisruptionsAllowed > 0 {
		return ""
	}
	if p := e.pdb.Spec.UnhealthyPodEvictionPolicy; p != nil && *p == policyv1.AlwaysAllow && !podReady(pod) {
		return ""
	}
	return fmt.Sprintf("PodDisruptionBudget %s/%s allows no disruption of pod %s now", e.pdb.Namespace, e.pdb.Name, podKey(pod))
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
