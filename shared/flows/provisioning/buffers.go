package provisioning

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/capacitybuffer"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// readBuffers reads the cluster's CapacityBuffers when the CapacityBuffer gate is on and the run has a
// reader (Dependencies.Buffers); otherwise nothing is read and it returns nil. A list that fails costs
// the buffers' room this run, not the run: the pending pods still get their capacity, and the error is
// in rep.Errors.
func (p *Provisioner) readBuffers(ctx context.Context, cfg runConfig, rep *Report) *capacitybuffer.Set {
	if !cfg.settings.FeatureGates.CapacityBuffer || p.deps.Buffers == nil {
		return nil
	}
	set, err := capacitybuffer.Read(ctx, p.deps.Buffers)
	if err != nil {
		rep.Errors = append(rep.Errors, fmt.Sprintf("reading CapacityBuffers: %v", err))
		return nil
	}
	rep.Errors = append(rep.Errors, set.Problems...)
	rep.Buffers = len(set.Buffers)
	return set
}

// writeBufferStatus writes back each buffer's status where it changed, with where plan (nil: no solve,
// no virtual pod to place) put its virtual pods.
func (p *Provisioner) writeBufferStatus(ctx context.Context, set *capacitybuffer.Set, plan *scheduling.Plan, rep *Report) {
	if set == nil || len(set.Buffers) == 0 {
		return
	}
	var placed map[string]capacitybuffer.Placement
	if plan != nil {
		placed = capacitybuffer.Tally(plan)
	}
	w := set.WriteStatus(ctx, p.deps.Buffers, placed, p.deps.Now())
	rep.BufferStatusWrites += w.Written
	rep.Errors = append(rep.Errors, w.Errors...)
}

// withoutBufferPods drops the failures of virtual pods: a buffer that needs room it cannot get says so in
// its status (Provisioning False, RequiresNewCapacity), not in pod records and Events.
func withoutBufferPods(failures []scheduling.PodFailure) []scheduling.PodFailure {
	out := failures[:0:0]
	for _, f := range failures {
		if !scheduling.IsBufferPod(f.Pod) {
			out = append(out, f)
		}
	}
	return out
}

// countBufferPods splits pods into those of the cluster and CapacityBuffers' virtual ones.
func countBufferPods(pods []*corev1.Pod) (real, buffered int) {
	for _, p := range pods {
		if scheduling.IsBufferPod(p) {
			buffered++
		} else {
			real++
		}
	}
	return real, buffered
}
