package disruptionrun

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// podEvents dates each node's last pod event, the clock consolidateAfter counts from.
//
// A serverless function sees no watch stream, so the last pod event of a node is taken as the latest of:
//   - the creation and the scheduling (PodScheduled condition) of every pod bound to it now: exact to the
//     second for pods that arrived;
//   - the run that first saw the node's set of pods change (a pod left, or arrived and is already gone):
//     a removal is dated by the first run after it, so within the schedule's minute (or sooner when a
//     drain's wake-up triggers a run);
//   - the run that first saw the node at all. The sets seen are held by the warm function, so after a
//     cold start a removal that happened before it cannot be known; rather than guess that nothing left
//     (and consolidate a node earlier than consolidateAfter allows), every node counts as changed when
//     first seen. A cold start therefore delays consolidation by up to consolidateAfter once (nothing
//     with the default 0s); it never hastens it. A node that has just joined is first seen within a
//     minute of its launch, which is what its clock would say anyway.
type podEvents struct {
	mu   sync.Mutex
	seen map[string]podMemo
}

type podMemo struct {
	fingerprint uint64
	changedAt   time.Time
	// firstSight says changedAt is when this process first saw the node, not a change it saw.
	firstSight bool
}

// lastEvent returns the node's last pod event and records its current pod set; the caller holds mu.
func (e *podEvents) lastEvent(n *corev1.Node, pods []*corev1.Pod, now time.Time) time.Time {
	var last time.Time
	var fp uint64
	for _, p := range pods {
		fp += podFingerprint(p)
		if t := p.CreationTimestamp.Time; t.After(last) {
			last = t
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue && c.LastTransitionTime.After(last) {
				last = c.LastTransitionTime.Time
			}
		}
	}
	key := n.Name + "/" + string(n.UID)
	m, known := e.seen[key]
	switch {
	case !known:
		m = podMemo{fingerprint: fp, changedAt: now, firstSight: true}
	case m.fingerprint != fp:
		m = podMemo{fingerprint: fp, changedAt: now}
	}
	e.seen[key] = m
	if m.changedAt.After(last) {
		last = m.changedAt
	}
	return last
}

// guessed reports whether last, the node's last pod event as lastEvent answered it, is only the first
// sight of the node by this process (a cold start's stand-in for removals it cannot know), not a pod
// event anyone saw; the caller holds mu.
func (e *podEvents) guessed(n *corev1.Node, last time.Time) bool {
	m, ok := e.seen[n.Name+"/"+string(n.UID)]
	return ok && m.firstSight && m.changedAt.Equal(last)
}

// podFingerprint is the FNV-1a hash of a pod's identity (UID, namespace, name, each ended by a zero
// byte). lastEvent adds them up: the sum does not depend on the pods' order, so no sorted copy of the
// set is built for each node and read, and nothing is allocated.
func podFingerprint(p *corev1.Pod) uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for _, s := range [...]string{string(p.UID), p.Namespace, p.Name} {
		for i := 0; i < len(s); i++ {
			h = (h ^ uint64(s[i])) * prime
		}
		h *= prime // the zero byte: h ^ 0 is h
	}
	return h
}

// forget drops nodes no longer in the cluster; the caller holds mu.
func (e *podEvents) forget(present map[string]bool) {
	for key := range e.seen {
		name := key
		for i := len(key) - 1; i >= 0; i-- {
			if key[i] == '/' {
				name = key[:i]
				break
			}
		}
		if !present[name] {
			delete(e.seen, key)
		}
	}
}
