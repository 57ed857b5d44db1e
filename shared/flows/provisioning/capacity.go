package provisioning

import (
	"context"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// CapacityMark is the state table's mark of the last snapshot whose capacity was reported: runs in
// different processes take turns with the lease, and the mark keeps each pod's startup counted once.
const CapacityMark = "capacity-metrics"

// CapacityEvery is how often the capacity is summed for the metrics: the dashboard's resolution is a
// minute, and summing the requests of 150,000 pods on every triggered run would only add work.
const CapacityEvery = 50 * time.Second

// maxStartupWindow bounds how far back a startup is looked for when the mark is old or missing.
const maxStartupWindow = 10 * time.Minute

// PoolCapacity is what one NodePool's Nodes offer and what runs on them, for Karpenter's node metrics
// summed per NodePool (nodes_allocatable, nodes_system_overhead, nodes_total_pod_requests,
// nodes_total_daemon_requests, pods_state).
type PoolCapacity struct {
	NodePool string
	Nodes    int
	// Allocatable is what the kubelets offer pods; Overhead what they keep back (capacity − allocatable).
	Allocatable, Overhead scheduling.Resources
	// PodRequests are the requests of every non-terminal pod bound to the Nodes; DaemonRequests those
	// of the DaemonSet pods among them.
	PodRequests, DaemonRequests scheduling.Resources
	// Pods counts the pods bound to the Nodes by phase (Pending until their containers start, Running).
	Pods map[corev1.PodPhase]int
}

// Capacity is the capacity of Nodewright's Nodes as one snapshot shows it.
type Capacity struct {
	// Pools are the NodePools with Nodewright Nodes, by name; a pool without Nodes reports nothing.
	Pools []PoolCapacity
	// Startup are how long the pods on Nodewright Nodes that became Ready in the window took from
	// creation to Ready (Karpenter's pods_startup_duration_seconds).
	Startup []time.Duration
}

// CapacityOf sums snap's Nodes that one of claims stands for (Karpenter's and unmanaged Nodes are not
// Nodewright's to report), skipping Nodes being deleted, and the pods bound to them. Startups are those
// whose Ready condition turned true after since and no later than at. It reads nothing: one pass over
// the snapshot's Nodes and bound pods, which the run holds anyway.
func CapacityOf(snap *kube.Snapshot, claims ClaimIndex, since, at time.Time) Capacity {
	pools := map[string]*PoolCapacity{}
	poolOf := map[string]*PoolCapacity{}
	for i := range snap.Nodes {
		n := &snap.Nodes[i]
		if n.DeletionTimestamp != nil {
			continue
		}
		if _, ours := claims.Of(n); !ours {
			continue
		}
		name := n.Labels[scheduling.LabelNodePool]
		p := pools[name]
		if p == nil {
			p = &PoolCapacity{NodePool: name, Pods: map[corev1.PodPhase]int{}}
			pools[name] = p
		}
		p.Nodes++
		alloc := scheduling.ResourcesFromList(n.Status.Allocatable)
		p.Allocatable = p.Allocatable.Add(alloc)
		if len(n.Status.Allocatable) > 0 {
			p.Overhead = p.Overhead.Add(scheduling.ResourcesFromList(n.Status.Capacity).Sub(alloc))
		}
		poolOf[n.Name] = p
	}
	var out Capacity
	for _, pod := range snap.Bound {
		p := poolOf[pod.Spec.NodeName]
		if p == nil {
			continue
		}
		req := scheduling.PodRequests(pod)
		p.PodRequests = p.PodRequests.Add(req)
		if ownedByDaemonSet(pod) {
			p.DaemonRequests = p.DaemonRequests.Add(req)
		}
		phase := pod.Status.Phase
		if phase == "" {
			phase = corev1.PodPending
		}
		p.Pods[phase]++
		if d, ok := startedBetween(pod, since, at); ok {
			out.Startup = append(out.Startup, d)
		}
	}
	for _, p := range pools {
		out.Pools = append(out.Pools, *p)
	}
	sort.Slice(out.Pools, func(i, j int) bool { return out.Pools[i].NodePool < out.Pools[j].NodePool })
	return out
}

func ownedByDaemonSet(pod *corev1.Pod) bool {
	for _, o := range pod.OwnerReferences {
		if o.Kind == "DaemonSet" {
			return true
		}
	}
	return false
}

// startedBetween is how long pod took from creation to Ready when it became Ready in (since, at].
func startedBetween(pod *corev1.Pod, since, at time.Time) (time.Duration, bool) {
	for _, c := range pod.Status.Conditions {
		if c.Type != corev1.PodReady || c.Status != corev1.ConditionTrue {
			continue
		}
		ready := c.LastTransitionTime.Time
		if !ready.After(since) || ready.After(at) {
			return 0, false
		}
		return max(ready.Sub(pod.CreationTimestamp.Time), 0), true
	}
	return 0, false
}

// noteCapacity sums the snapshot's capacity into rep when the last report is CapacityEvery old (in this
// process first, then by the state table's mark, one GetItem), and advances the mark. It runs after the
// run's launches, so it adds nothing to the time a pending pod waits; a failed mark read or write is a
// problem of the run, not an error.
func (p *Provisioner) noteCapacity(ctx context.Context, snapshotAt time.Time, snap *kube.Snapshot, claims ClaimIndex, rep *Report) {
	if last := p.lastCapacity.Load(); last != 0 && snapshotAt.Sub(time.Unix(0, last)) < CapacityEvery {
		return
	}
	mark, err := p.deps.Store.Mark(ctx, CapacityMark)
	if err != nil {
		rep.Errors = append(rep.Errors, fmt.Sprintf("reading the capacity mark: %v", err))
		return
	}
	if snapshotAt.Sub(mark) < CapacityEvery {
		p.lastCapacity.Store(mark.UnixNano())
		return
	}
	since := mark
	if since.IsZero() {
		since = snapshotAt // the first report ever: no startup window yet
	}
	since = maxTime(since, snapshotAt.Add(-maxStartupWindow))
	capacity := CapacityOf(snap, claims, since, snapshotAt)
	if err := p.deps.Store.AdvanceMark(ctx, CapacityMark, snapshotAt); err != nil {
		rep.Errors = append(rep.Errors, fmt.Sprintf("recording the capacity mark: %v", err))
		return // reported by the next run instead: no startup is counted twice
	}
	p.lastCapacity.Store(snapshotAt.UnixNano())
	rep.Capacity = &capacity
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
