package provisioning

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/mirror"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// NodePools are not objects of the cluster (Nodewright keeps them in DynamoDB); their Events name them
// under Karpenter's kind (kube.NodePoolObject), in the default namespace, where `kubectl get events
// --field-selector reason=…` finds them as it finds Karpenter's. NodeClaim Events name the claim's
// NodeClaim mirror (mirror.NodeClaimObject); the function's mirror.ClaimEvents gives them its UID, so
// `kubectl describe nodeclaims.nodewright.sh` shows them.

// maxCapacityEvents bounds the InsufficientCapacityError Events of one run. A fleet-wide shortage can fail
// dozens of claims at once; their decision records say everything, and the Events must not spend the
// Recorder's burst that the run's Nominated and FailedScheduling Events share.
const maxCapacityEvents = 20

// capacityEvents tell of the launches that failed for lack of capacity (reason NoCapacity:
// every offering of every allowed capacity type was short), as Karpenter's launch publishes
// InsufficientCapacityError on the NodeClaim: first one on each failed claim, then, while the bound
// allows, one on each pod the claim was for (the object `kubectl describe pod` shows), which the next run
// solves again without those offerings.
func capacityEvents(failures []LaunchFailure) []kube.Event {
	var claims, pods []kube.Event
	for _, f := range failures {
		if f.Reason != NoCapacity {
			continue
		}
		claims = append(claims, kube.Event{Object: mirror.NodeClaimObject(f.Claim, ""), Type: corev1.EventTypeWarning,
			Reason:  kube.ReasonInsufficientCapacityError,
			Message: fmt.Sprintf("NodeClaim %s of NodePool %s found no capacity in any offering it allows: %v", f.Claim, f.NodePool, f.Err)})
		for _, pod := range f.pods {
			pods = append(pods, kube.Event{Object: kube.PodObject(pod), Type: corev1.EventTypeWarning,
				Reason: kube.ReasonInsufficientCapacityError,
				Message: fmt.Sprintf("NodeClaim %s, planned for this pod, found no capacity in any offering it allows; the next run plans again without those offerings",
					f.Claim)})
		}
	}
	out := append(claims, pods...)
	return out[:min(len(out), maxCapacityEvents)]
}

// classEvents tell each NodePool left out of the run because its EC2NodeClass is missing, not Ready or
// unusable (prepareClasses' failed, class → why) that it launches nothing. Karpenter v1.14 reports this
// through the NodePool's NodeClassReady condition and the AWS provider's "Failed resolving NodeClass"
// Event on it; the NodePool gets a NodeClassNotReady Event here (the disruption function also shows the
// condition on the NodePool mirror, with the same Event on it: shared/adapters/mirror). A class
// whose resolution failed for a transient AWS error (unresolved) is not reported: the next run tries
// again. One Event per NodePool; the Recorder drops repeats within its window.
func classEvents(pools []string, classOf map[string]string, failed map[string]string, unresolved []string) []kube.Event {
	var out []kube.Event
	for _, pool := range pools {
		class := classOf[pool]
		why, bad := failed[class]
		if !bad || slices.Contains(unresolved, class) {
			continue
		}
		out = append(out, kube.Event{Object: kube.NodePoolObject(pool), Type: corev1.EventTypeWarning, Reason: kube.ReasonNodeClassNotReady,
			Message: fmt.Sprintf("NodePool %s launches nothing: %s", pool, why)})
	}
	return out
}

// incompatibleEvents tell each NodePool whose requirements left no instance type (the solve's
// NoCompatibleInstanceTypes) that it can launch nothing, as Karpenter's scheduler does on the NodePool.
func incompatibleEvents(pools []string) []kube.Event {
	out := make([]kube.Event, 0, len(pools))
	for _, pool := range pools {
		out = append(out, kube.Event{Object: kube.NodePoolObject(pool), Type: corev1.EventTypeWarning,
			Reason: kube.ReasonNoCompatibleInstanceTypes,
			Message: fmt.Sprintf("NodePool %s can launch nothing: no instance type both meets its requirements and has an available offering with room for its daemons",
				pool)})
	}
	return out
}

// poolNames are the names of pools, in order.
func poolNames(pools []scheduling.NodePool) []string {
	out := make([]string, len(pools))
	for i, p := range pools {
		out[i] = p.Name
	}
	return out
}

// poolClasses maps each pool to the EC2NodeClass it references.
func poolClasses(pools []scheduling.NodePool) map[string]string {
	out := make(map[string]string, len(pools))
	for _, p := range pools {
		out[p.Name] = NodeClassRefName(p)
	}
	return out
}
