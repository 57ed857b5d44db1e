package disruption

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/scheduling"
)

// podCache memoizes what the engine derives from pods alone: per pod object its requests and
// whether the scheduler accepts it at all, and per node its pods in order. One Decide reads every
// bound pod's requests three times (candidates, compact nodes, the pruner), and Sequence runs
// Decide after every command on the same pod objects (it moves pointers and never changes a pod),
// so it shares one cache across the whole sequence. Every answer is a pure function of what it is
// keyed by, so the cache changes no answer.
type podCache struct {
	requests map[*corev1.Pod]scheduling.Resources
	valid    map[*corev1.Pod]error
	// sorted holds each node's pods in podKey order, by node name, with the pods they were sorted
	// from: a node whose pods did not change is not sorted again.
	sorted map[string]sortedPodsOf
}

type sortedPodsOf struct{ from, sorted []*corev1.Pod }

func newPodCache() *podCache {
	return &podCache{requests: map[*corev1.Pod]scheduling.Resources{}, valid: map[*corev1.Pod]error{}, sorted: map[string]sortedPodsOf{}}
}

// sortedPods is sortedPods(pods) for node, memoized when the cache is set. The answer is shared:
// callers must not modify it.
func (c *podCache) sortedPods(node string, pods []*corev1.Pod) []*corev1.Pod {
	if c == nil {
		return sortedPods(pods)
	}
	if s, ok := c.sorted[node]; ok && slices.Equal(s.from, pods) {
		return s.sorted
	}
	s := sortedPodsOf{from: slices.Clone(pods), sorted: sortedPods(pods)}
	c.sorted[node] = s
	return s.sorted
}

// podRequests is scheduling.PodRequests, memoized when the cache is set.
func (c *podCache) podRequests(p *corev1.Pod) scheduling.Resources {
	if c == nil {
		return scheduling.PodRequests(p)
	}
	r, ok := c.requests[p]
	if !ok {
		r = scheduling.PodRequests(p)
		c.requests[p] = r
	}
	return r
}

// validatePod is scheduling.ValidatePod, memoized when the cache is set.
func (c *podCache) validatePod(p *corev1.Pod) error {
	if c == nil {
		return scheduling.ValidatePod(p)
	}
	err, ok := c.valid[p]
	if !ok {
		err = scheduling.ValidatePod(p)
		c.valid[p] = err
	}
	return err
}
