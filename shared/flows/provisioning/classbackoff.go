package provisioning

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// classBackoffs are the EC2NodeClasses held back at now by instances that died at launch
// (state.ClassFailures.Backoff): failures since a node of the class last initialized (from the claims)
// and of the class's spec as configured now (its drift hash), so an operator who fixes the class does not
// wait out the back-off. Nil when no class has failures: the common case costs nothing beyond the read.
func classBackoffs(records []state.ClassFailures, classHash map[string]string, claims []state.Claim, now time.Time) map[string]state.ClassBackoff {
	if len(records) == 0 {
		return nil
	}
	since := state.ClassesInitializedAt(claims)
	var out map[string]state.ClassBackoff
	for _, r := range records {
		b, held := r.Backoff(classHash[r.NodeClass], since[r.NodeClass], now)
		if !held {
			continue
		}
		if out == nil {
			out = map[string]state.ClassBackoff{}
		}
		out[r.NodeClass] = b
	}
	return out
}

// withoutBackedOff splits pools into those that may launch and those whose EC2NodeClass is backing off.
// A held pool is left out of the solve as a pool whose class is not ready; its claims in flight still
// count as capacity (inFlightClaims is given every pool), so its booting nodes' pods launch nothing new.
func withoutBackedOff(pools []scheduling.NodePool, backoffs map[string]state.ClassBackoff) (launch, held []scheduling.NodePool) {
	if len(backoffs) == 0 {
		return pools, nil
	}
	for _, p := range pools {
		if _, ok := backoffs[NodeClassRefName(p)]; ok {
			held = append(held, p)
			continue
		}
		launch = append(launch, p)
	}
	return launch, held
}

// explainBackedOff tells the pods that no pool could take why, when a pool held back would have: their
// reason names the class, its failures, the last state reason and when it may launch again. It solves
// those pods alone over the held pools (only when a class is backing off and pods are left over).
func explainBackedOff(failures []scheduling.PodFailure, held []scheduling.NodePool, backoffs map[string]state.ClassBackoff,
	in scheduling.Input) []scheduling.PodFailure {
	if len(held) == 0 || len(failures) == 0 {
		return failures
	}
	pods := make([]*corev1.Pod, 0, len(failures))
	for _, f := range failures {
		if f.Pod != nil {
			pods = append(pods, f.Pod)
		}
	}
	in.Pods, in.NodePools, in.Nodes, in.InFlight = pods, held, nil, nil
	plan, err := scheduling.Solve(in)
	if err != nil {
		return failures
	}
	classOf := map[string]string{}
	for _, p := range held {
		classOf[p.Name] = NodeClassRefName(p)
	}
	why := map[string]string{}
	for _, cp := range plan.NewClaims {
		for _, name := range cp.PodNames {
			why[name] = backoffs[classOf[cp.NodePool]].String()
		}
	}
	out := make([]scheduling.PodFailure, len(failures))
	for i, f := range failures {
		if w, ok := why[f.PodName]; ok {
			f.Reason = w + "; " + f.Reason
		}
		out[i] = f
	}
	return out
}
