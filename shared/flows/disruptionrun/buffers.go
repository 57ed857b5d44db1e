package disruptionrun

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/capacitybuffer"
	"github.com/nodewright/nodewright/shared/core/disruption"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// bufferReuse is how long a run reuses the CapacityBuffers it read (their specs and templates; where
// their room is, is placed afresh on every read): a run reads the cluster several times (advance,
// each decision, each validation), and buffers are written by people, not by the cluster. So a run
// makes at most one LIST of buffers (and a GET per buffer) a minute.
const bufferReuse = time.Minute

// bufferRead is the buffers a run read and when.
type bufferRead struct {
	set *capacitybuffer.Set
	at  time.Time
}

// keepBufferRoom adds the room of the cluster's CapacityBuffers to the engine's input when the
// CapacityBuffer gate is on (off, nothing is read). Their virtual pods are placed as the provisioner
// places them, by the scheduler, on the existing nodes and claims in flight (initialized nodes
// first): a pod placed on a node is bound to it in the input, so the node is not empty and a command
// that removes it must find the room again elsewhere (or launch it), as for any pod; a pod placed on
// a claim in flight or nowhere is pending, simulated with the moved pods. Buffers that cannot be
// read leave the input incomplete: room unknown is no room to remove.
func (r *Runner) keepBufferRoom(ctx context.Context, w *world, gateOn bool) {
	if !gateOn || r.deps.Buffers == nil || w.input.Incomplete != "" {
		return
	}
	set, err := r.readBuffers(ctx, w.input.Now)
	switch {
	case err != nil:
		w.input.Incomplete = fmt.Sprintf("CapacityBuffers: %v", err)
		return
	case len(set.Unresolved) > 0:
		w.input.Incomplete = "CapacityBuffers: the templates of " + strings.Join(set.Unresolved, ", ") + " could not be read"
		return
	}
	w.problems = append(w.problems, set.Problems...)
	placeBufferPods(&w.input, set.Pods())
}

// readBuffers reads the buffers, or reuses the run's last read while it is younger than bufferReuse.
func (r *Runner) readBuffers(ctx context.Context, now time.Time) (*capacitybuffer.Set, error) {
	r.mu.Lock()
	last := r.buffers
	r.mu.Unlock()
	if last.set != nil && now.Sub(last.at) < bufferReuse && !now.Before(last.at) {
		return last.set, nil
	}
	set, err := capacitybuffer.Read(ctx, r.deps.Buffers)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.buffers = bufferRead{set: set, at: now}
	r.mu.Unlock()
	return set, nil
}

// placeBufferPods places virtual pods in the input: one solve of them alone over the input's nodes that
// are not leaving (with their bound pods) and its claims in flight, without NodePools, so a pod either
// finds room or is unschedulable. Pods placed on a node are bound to it (a copy with the node's name);
// the rest join the pending pods.
func placeBufferPods(in *disruption.Input, pods []*corev1.Pod) {
	if len(pods) == 0 {
		return
	}
	index := map[string]int{}
	var nodes []scheduling.ExistingNode
	for i := range in.Nodes {
		n := &in.Nodes[i]
		if n.Disrupting || n.Node.DeletionTimestamp != nil || hasDisruptedTaint(n.Node) {
			continue
		}
		index[n.Name()] = i
		nodes = append(nodes, scheduling.ExistingNode{Node: n.Node, Pods: n.Pods, NodePool: n.NodePool, Initialized: n.Initialized})
	}
	plan, err := scheduling.Solve(scheduling.Input{Pods: pods, Nodes: nodes, InFlight: in.InFlight, DaemonSets: in.DaemonSets,
		Namespaces: in.Namespaces, IgnorePreferences: in.IgnorePreferences})
	if err != nil {
		in.PendingPods = append(in.PendingPods, pods...)
		return
	}
	bound := map[*corev1.Pod]bool{}
	for _, placed := range plan.ExistingNodes {
		i, ok := index[placed.Name]
		if !ok {
			continue // a claim in flight: the pod stays pending, and the simulation finds it the same room
		}
		n := &in.Nodes[i]
		podsOn := slices.Clone(n.Pods)
		for _, p := range placed.Pods {
			q := p.DeepCopy()
			q.Spec.NodeName = n.Name()
			q.Status.Phase, q.Status.Conditions = corev1.PodRunning, nil
			podsOn = append(podsOn, q)
			bound[p] = true
		}
		n.Pods = podsOn
	}
	for _, p := range pods {
		if !bound[p] {
			in.PendingPods = append(in.PendingPods, p)
		}
	}
}
