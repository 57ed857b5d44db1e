package scheduling

import (
	corev1 "k8s.io/api/core/v1"
)

// hostAllowed reports whether a pod with topology ct may join the node (or claim) named host, which is new
// when it has no pods yet.
func (t *topology) hostAllowed(ct *classTopology, host string) bool {
	if ct == nil {
		return true
	}
	for _, g := range ct.owned {
		if g.key != LabelHostname {
			continue
		}
		switch g.kind {
		case kindSpread:
			if g.counts[host]+1 > g.maxSkew {
				return false
			}
		case kindAntiAffinity:
			if g.counts[host] > 0 {
				return false
			}
		case kindAffinity:
			if g.total > 0 && g.counts[host] == 0 {
				return false
			}
			if g.total == 0 && !g.selfMatching {
				return false
			}
		}
	}
	for _, g := range ct.inverse {
		if g.key == LabelHostname && g.owners[host] > 0 {
			return false
		}
	}
	return true
}

// record counts a placed pod in every group that selects it, and as an owner of its own groups. host
// is the node or claim; reqs are its requirements, whose single values are its domains (a claim not yet
// narrowed to one value of a key is counted in no domain of that key).
func (t *topology) record(ct *classTopology, host string, reqs Requirements, taints []corev1.Taint) {
	if ct == nil {
		return
	}
	for _, g := range ct.matching {
		g.pending--
		g.changed()
	}
	domain := func(g *topoGroup) string {
		if g.key == LabelHostname {
			return host
		}
		return singleValue(reqs, g.key)
	}
	for _, g := range ct.matching {
		if d := domain(g); d != "" && g.countsOn(taints) {
			g.counts[d]++
			g.total++
		}
	}
	for _, g := range ct.owned {
		if d := domain(g); d != "" {
			g.version++
			g.owners[d]++
		}
	}
}

// recordExisting counts a pod already bound to a node.
func (t *topology) recordExisting(pod *corev1.Pod, host string, reqs Requirements, taints []corev1.Taint) {
	t.recordExistingMatching(pod, host, reqs, taints, t.matchingGroups(pod), t.ownedGroups(pod))
}

// ownedGroups are the groups of the pod's own topology terms (none when they cannot be modelled).
func (t *topology) ownedGroups(pod *corev1.Pod) []*topoGroup {
	owned, err := t.groupsFor(pod, softTerms{})
	if err != nil {
		return nil
	}
	return owned
}

// matchingGroups are the groups whose selector selects the pod, in t.order.
func (t *topology) matchingGroups(pod *corev1.Pod) []*topoGroup {
	return t.selecting(pod.Namespace, pod.Labels)
}

// recordExistingMatching is recordExisting given the pod's matchingGroups and ownedGroups (not
// modified).
func (t *topology) recordExistingMatching(pod *corev1.Pod, host string, reqs Requirements, taints []corev1.Taint, matching, owned []*topoGroup) {
	ct := &classTopology{owned: owned, matching: matching}
	for _, g := range ct.matching {
		g.pending++ // a running pod was never pending; record takes it off again
		g.changed()
	}
	t.record(ct, host, reqs, taints)
}

// forget takes failed pods of a class off the pending counts.
func (t *topology) forget(ct *classTopology, n int) {
	if ct == nil {
		return
	}
	for _, g := range ct.matching {
		g.pending -= n
		g.changed()
	}
}
