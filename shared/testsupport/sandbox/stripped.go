package sandbox

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/reconcile"
)

// reasonNodeLost is the termination reason the lifecycle hands a claim over with when its Node is gone
// while its instance runs (reconcile's node_lost).
const reasonNodeLost = "node_lost"

// StrippedNodeReport is the coexistence scenario's Nodewright Node deleted with its finalizer stripped
// (an operator's `kubectl patch` removing finalizers, then `kubectl delete node`): nothing holds the Node,
// so only the lifecycle's lost-Node rule can see that its instance still runs. Its instance must end
// terminated through the termination flow (the claim deleted by it, reason node_lost), and its pods run
// elsewhere. The timings are from the deletion (-1: not within the wait).
type StrippedNodeReport struct {
	StrippedNode                         string  `json:"strippedNode"`
	StrippedNodeInstance                 string  `json:"strippedNodeInstance"`
	StrippedNodePods                     int     `json:"strippedNodePods"`
	StrippedNodeInstanceTerminated       bool    `json:"strippedNodeInstanceTerminated"`
	StrippedNodeInstanceTerminatedAfterS float64 `json:"strippedNodeInstanceTerminatedAfterSeconds"`
	// StrippedNodeClaim is the claim's lifecycle and disruption reason at the end ("deleted/node_lost"
	// when the termination flow finished it).
	StrippedNodeClaim                 string  `json:"strippedNodeClaim"`
	StrippedNodePodsRescheduledAfterS float64 `json:"strippedNodePodsRescheduledAfterSeconds"`
	StrippedNodePodsLost              int     `json:"strippedNodePodsLost"`
}

// strippedNodeTimeout bounds the wait: the lost-Node grace, then the hand-over, the termination and the
// pods' new capacity.
const strippedNodeTimeout = reconcile.NodeLostGrace + 4*time.Minute

// strippedNodeStep strips nodewright.sh/termination off the Nodewright Node running the most inflate
// pods and deletes it, then waits (bounded) until the termination flow has terminated its instance and
// deleted its claim, and its pods run elsewhere.
func (s *Sandbox) strippedNodeStep(ctx context.Context, o CoexistenceOptions, rep *StrippedNodeReport) error {
	victim, pods, err := s.busiestClaim(ctx, o.Namespace, "")
	if err != nil {
		return err
	}
	rep.StrippedNode, rep.StrippedNodeInstance, rep.StrippedNodePods = victim.NodeName, victim.InstanceID, pods
	rep.StrippedNodeInstanceTerminatedAfterS, rep.StrippedNodePodsRescheduledAfterS = -1, -1
	s.Timeline.Restart()
	start := time.Now()
	if err := kube.NewActions(s.Client).RemoveFinalizer(ctx, victim.NodeName, kube.TerminationFinalizer); err != nil {
		return fmt.Errorf("kubectl patch node %s (finalizers removed): %w", victim.NodeName, err)
	}
	if err := s.Client.CoreV1().Nodes().Delete(ctx, victim.NodeName, metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("kubectl delete node %s: %w", victim.NodeName, err)
	}
	s.Timeline.Printf("scenario", "Node %s deleted with %s stripped (instance %s, %d inflate pods); the lifecycle hands it over after %s",
		victim.NodeName, kube.TerminationFinalizer, victim.InstanceID, pods, reconcile.NodeLostGrace)
	since := func() float64 { return round3(time.Since(start).Seconds()) }
	deadline := start.Add(strippedNodeTimeout)
	last, elsewhere := "", 0
	var claim state.Claim
	for {
		if claim, err = s.Store.GetClaim(ctx, victim.Name); err != nil {
			return err
		}
		finished := claim.Lifecycle == state.Deleted && claim.DisruptionReason == reasonNodeLost
		if rep.StrippedNodeInstanceTerminatedAfterS < 0 && finished {
			gone, err := s.foreignInstancesTerminated(ctx, []string{victim.InstanceID})
			if err != nil {
				return err
			}
			if gone > 0 {
				rep.StrippedNodeInstanceTerminatedAfterS = since()
				s.Timeline.Printf("scenario", "the termination flow terminated instance %s and deleted claim %s", victim.InstanceID, victim.Name)
			}
		}
		if _, elsewhere, err = s.inflateRunning(ctx, o.Namespace, victim.NodeName); err != nil {
			return err
		}
		if elsewhere >= int(o.Replicas) && rep.StrippedNodePodsRescheduledAfterS < 0 {
			rep.StrippedNodePodsRescheduledAfterS = since()
		}
		line := fmt.Sprintf("%d/%d inflate pods running on other nodes, claim %s %s, instance terminated: %v",
			elsewhere, o.Replicas, victim.Name, claim.Lifecycle, rep.StrippedNodeInstanceTerminatedAfterS >= 0)
		if line != last {
			s.Timeline.Printf("progress", "%s", line)
			last = line
		}
		if rep.StrippedNodeInstanceTerminatedAfterS >= 0 && rep.StrippedNodePodsRescheduledAfterS >= 0 {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			s.Timeline.Printf("scenario", "gave up waiting after %s", strippedNodeTimeout)
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	rep.StrippedNodeClaim = string(claim.Lifecycle) + "/" + claim.DisruptionReason
	rep.StrippedNodeInstanceTerminated = rep.StrippedNodeInstanceTerminatedAfterS >= 0
	rep.StrippedNodePodsLost = max(int(o.Replicas)-elsewhere, 0)
	return nil
}

// targets adds the stripped Node's targets to the scenario's.
func (r StrippedNodeReport) targets(met map[string]bool) {
	met["strippedNodeInstanceTerminated"] = r.StrippedNodeInstanceTerminated
	met["strippedNodePodsLost=0"] = r.StrippedNodePodsLost == 0 && r.StrippedNodePodsRescheduledAfterS >= 0
}
