package disruption

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// nodePods is what judging a node as a candidate reads of its pods that does not depend on the
// clock, in the pods' order (podKey): the pods that must move with their requests and disruption
// cost, the first the scheduler refuses outright, and the pods that may keep the node: those with
// a karpenter.sh/do-not-disrupt annotation (whose duration is judged against the clock) or a
// PodDisruptionBudget that allows no eviction. Sequence judges every node again after every
// command; podCache keeps this per node while its pods (and the PDBs) stay the same.
type nodePods struct {
	from []*corev1.Pod
	pdb  *pdbs
	// blockers are the active pods that may block, with their place among the active pods.
	blockers []placedPod
	// invalid is the place of the first pod that must move and that the scheduler refuses, -1
	// when none; invalidWhy says why.
	invalid    int
	invalidWhy string
	pods       []*corev1.Pod
	cpu, mem   float64
	cost       float64
}

type placedPod struct {
	at  int
	pod *corev1.Pod
}

func readNodePods(pods []*corev1.Pod, pdb *pdbs, cache *podCache) *nodePods {
	np := &nodePods{from: slices.Clone(pods), pdb: pdb, invalid: -1}
	at := 0
	for _, p := range sortedPods(pods) {
		if !isActive(p) {
			continue
		}
		// A CapacityBuffer's virtual pod is room, not a workload: it moves like a pod, but neither a
		// do-not-disrupt annotation nor a PodDisruptionBudget matching its template's labels holds it.
		if _, dnd := p.Annotations[AnnotationDoNotDisrupt]; !scheduling.IsBufferPod(p) && (dnd || (!isMirror(p) && pdb.blocks(p) != "")) {
			np.blockers = append(np.blockers, placedPod{at, p})
		}
		if isReschedulable(p) && np.invalid < 0 {
			if err := cache.validatePod(p); err != nil {
				np.invalid, np.invalidWhy = at, fmt.Sprintf("pod %s could not be rescheduled anywhere: %v", podKey(p), err)
			}
			np.pods = append(np.pods, p)
			req := cache.podRequests(p)
			np.cpu += float64(req.CPU)
			np.mem += float64(req.Memory)
		}
		at++
	}
	np.pods = slices.Clip(np.pods)
	np.cost = RescheduleDisruptionCost(np.pods)
	return np
}

// firstBlock returns why the first blocking pod placed before the pod at limit (any place when
// limit is negative) keeps voluntary disruption off the node now, or "".
func (np *nodePods) firstBlock(now time.Time, limit int) string {
	for _, b := range np.blockers {
		if limit >= 0 && b.at > limit {
			break
		}
		if why := podBlock(now, b.pod, np.pdb); why != "" {
			return why
		}
	}
	return ""
}
