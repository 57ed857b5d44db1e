package disruption

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// podCache memoizes what the engine derives from pods alone: per pod object its requests and
// whether the scheduler accepts it at all, and per node what judging it as a candidate reads of
// its pods (nodePods) and the requests of its active pods. One Decide reads every bound pod's
// requests three times (candidates, compact nodes, the pruner), and Sequence runs Decide after
// every command on the same pod objects (it moves pointers and never changes a pod), so it shares
// one cache across the whole sequence. Every answer is a pure function of what it is
// keyed by, so the cache changes no answer.
type podCache struct {
	requests map[*corev1.Pod]scheduling.Resources
	valid    map[*corev1.Pod]error
	// nodes holds each node's nodePods by node name; a node whose pods (or PDBs) changed is read
	// again.
	nodes map[string]*nodePods
	// used holds each node's active pods' requests by node name, with the pods they sum.
	used map[string]usedBy
}

type usedBy struct {
	from []*corev1.Pod
	sum  scheduling.Resources
}

func newPodCache() *podCache {
	return &podCache{requests: map[*corev1.Pod]scheduling.Resources{}, valid: map[*corev1.Pod]error{}, nodes: map[string]*nodePods{}, used: map[string]usedBy{}}
}

// nodePods is readNodePods for node, memoized when the cache is set. The answer is shared:
// callers must not modify it.
func (c *podCache) nodePods(node string, pods []*corev1.Pod, pdb *pdbs) *nodePods {
	if c == nil {
		return readNodePods(pods, pdb, nil)
	}
	if np, ok := c.nodes[node]; ok && np.pdb == pdb && slices.Equal(np.from, pods) {
		return np
	}
	np := readNodePods(pods, pdb, c)
	c.nodes[node] = np
	return np
}

// activeRequests sums the requests of the active pods of node, memoized while its pods stay the
// same when the cache is set.
func (c *podCache) activeRequests(node string, pods []*corev1.Pod) scheduling.Resources {
	if c != nil {
		if u, ok := c.used[node]; ok && slices.Equal(u.from, pods) {
			return u.sum
		}
	}
	var sum scheduling.Resources
	for _, p := range pods {
		if isActive(p) {
			sum = sum.Add(c.podRequests(p))
		}
	}
	if c != nil {
		c.used[node] = usedBy{from: slices.Clone(pods), sum: sum}
	}
	return sum
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
