package disruption

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/scheduling"
)

// podCache memoizes, per pod object, what the engine derives from a pod alone: its requests and
// whether the scheduler accepts it at all. One Decide reads every bound pod's requests three
// times (candidates, compact nodes, the pruner), and Sequence runs Decide after every command on
// the same pod objects (it moves pointers and never changes a pod), so it shares one cache across
// the whole sequence. Both functions are pure, so the cache changes no answer.
type podCache struct {
	requests map[*corev1.Pod]scheduling.Resources
	valid    map[*corev1.Pod]error
}

func newPodCache() *podCache {
	return &podCache{requests: map[*corev1.Pod]scheduling.Resources{}, valid: map[*corev1.Pod]error{}}
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
