package sandbox

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/flows/provisioning"
)

// ForeignDisruption is Karpenter disrupting one of its own Nodes beside Nodewright (the coexistence
// scenario's karpenterDisruptionStep). The Node runs pods Nodewright could provision for too (they select
// team=b, which its teams NodePool offers), so a provisioner that took Karpenter's karpenter.sh/disrupted
// taint for its own drain would launch for them while Karpenter launches their replacement.
type ForeignDisruption struct {
	// ForeignDisruptedNode is the Karpenter Node Karpenter disrupted, ForeignReplacementNode the Node
	// Karpenter launched for its pods, ForeignDisruptedPods the pods that ran on it.
	ForeignDisruptedNode   string `json:"foreignDisruptedNode"`
	ForeignReplacementNode string `json:"foreignReplacementNode"`
	ForeignDisruptedPods   int    `json:"foreignDisruptedPods"`
	ForeignDisruptionLabel string `json:"foreignDisruptionLabel"`
	// ForeignDisruptionRuns counts the provisioner runs that held the lease while the Node was tainted
	// with its pods on it; ForeignDisruptionPodsSeen is the most pending pods any of them (and those
	// after the move) reported: the disrupted Node's pods, when a run takes them for its own to move.
	ForeignDisruptionRuns     int `json:"foreignDisruptionProvisionerRuns"`
	ForeignDisruptionPodsSeen int `json:"foreignDisruptionPodsSeenPending"`
	// LaunchesForForeignDisruption: instances Nodewright launched from the taint until the pods ran on
	// Karpenter's replacement and the provisioner ran again. Must be 0.
	LaunchesForForeignDisruption int `json:"launchesForForeignDisruption"`
	// ForeignDisruptionPodsMovedAfterS is from the taint to every pod running on the replacement (-1:
	// not within the wait); ForeignDisruptionPodsLost the pods not running there then.
	ForeignDisruptionPodsMovedAfterS float64 `json:"foreignDisruptionPodsMovedAfterSeconds"`
	ForeignDisruptionPodsLost        int     `json:"foreignDisruptionPodsLost"`

	// pods are the times of the disrupted Node's pods and their successors, for countForeignWrites.
	pods []podTimes
}

// foreignDisruptionTargets are the step's targets: it ran (the provisioner saw the tainted Node at least
// minRuns times and the pods moved) and Nodewright launched nothing for it.
func (d ForeignDisruption) foreignDisruptionTargets(targets map[string]bool, minRuns int) {
	targets["launchesForForeignDisruption=0"] = d.LaunchesForForeignDisruption == 0 && d.ForeignDisruptionRuns >= minRuns &&
		d.ForeignDisruptionPodsMovedAfterS >= 0
	targets["foreignDisruptionPodsLost=0"] = d.ForeignDisruptionPodsLost == 0 && d.ForeignDisruptionPodsMovedAfterS >= 0
}

// foreignDisruptionApp is the deployment on the Karpenter Node Karpenter disrupts; it selects
// team=b (foreignDisruptionLabel), which the Karpenter Nodes of the step carry and Nodewright's teams
// NodePool offers.
const (
	foreignDisruptionApp      = "karpenter-teamb"
	foreignDisruptionReplicas = 2
)

var foreignDisruptionLabel = map[string]string{"team": "b"}

// karpenterDisruptionStep is Karpenter disrupting one of its own Nodes, as its disruption controller
// does: a Node of its NodePool (labelled team=b) runs a deployment selecting team=b; Karpenter taints it
// karpenter.sh/disrupted:NoSchedule, the provisioner runs (as its schedule does) at least o.ProvisionerRuns
// times while Karpenter's replacement boots, the replacement Node joins, Karpenter evicts the pods and
// they run on the replacement; the provisioner runs again. Every Nodewright launch in that window counts
// in LaunchesForForeignDisruption. The Karpenter Nodes join fc, so the scenario's checks (writes to
// Karpenter's Nodes, its instances terminated, its pods evicted) cover them; the drained Node stays, as
// Karpenter would leave it until its own termination.
func (s *Sandbox) karpenterDisruptionStep(ctx context.Context, o CoexistenceOptions, fc *foreignCapacity, d *ForeignDisruption) error {
	d.ForeignDisruptionPodsMovedAfterS, d.ForeignDisruptionLabel = -1, "team=b"
	id, old, err := s.launchKarpenterNode(ctx, KarpenterNodePool+"-kd001", Zones[0], foreignDisruptionLabel)
	if err != nil {
		return err
	}
	fc.Instances, fc.Nodes, d.ForeignDisruptedNode = append(fc.Instances, id), append(fc.Nodes, old), old
	watch, err := watchPods(ctx, s.Client, o.Namespace, "app="+foreignDisruptionApp)
	if err != nil {
		return err
	}
	defer func() {
		d.pods = watch.snapshot()
		watch.close()
	}()
	deploy := pauseDeployment(foreignDisruptionApp, o.Namespace, foreignDisruptionReplicas, "800m", "512Mi", foreignDisruptionLabel)
	if _, err := s.Client.AppsV1().Deployments(o.Namespace).Create(ctx, deploy, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating the %s deployment: %w", foreignDisruptionApp, err)
	}
	if err := s.awaitRunningOn(ctx, o.Namespace, foreignDisruptionApp, old, foreignDisruptionReplicas, time.Minute); err != nil {
		return err
	}
	d.ForeignDisruptedPods = foreignDisruptionReplicas

	s.Timeline.Restart()
	start := time.Now()
	launchesBefore := len(s.Launches())
	if err := kube.NewActions(s.Client).Taint(ctx, old, apis.DisruptedNoScheduleTaint); err != nil {
		return fmt.Errorf("tainting Karpenter's Node %s: %w", old, err)
	}
	s.Timeline.Printf("karpenter", "disrupting its Node %s (%d %s pods, team=b): tainted %s:NoSchedule, replacement booting",
		old, foreignDisruptionReplicas, foreignDisruptionApp, apis.DisruptedTaintKey)
	d.ForeignDisruptionRuns = s.provisionerRunsSeeing(ctx, o.ProvisionerRuns, d)

	replacementID, replacement, err := s.launchKarpenterNode(ctx, KarpenterNodePool+"-kd002", Zones[0], foreignDisruptionLabel)
	if err != nil {
		return err
	}
	fc.Instances, fc.Nodes, d.ForeignReplacementNode = append(fc.Instances, replacementID), append(fc.Nodes, replacement), replacement
	if err := s.evictAll(ctx, o.Namespace, foreignDisruptionApp, old); err != nil {
		return err
	}
	running := 0
	if err := s.awaitRunningOn(ctx, o.Namespace, foreignDisruptionApp, replacement, foreignDisruptionReplicas, 2*time.Minute); err != nil {
		s.Timeline.Printf("scenario", "%v", err)
	} else {
		d.ForeignDisruptionPodsMovedAfterS = round3(time.Since(start).Seconds())
		running = foreignDisruptionReplicas
	}
	d.ForeignDisruptionPodsLost = foreignDisruptionReplicas - running
	s.provisionerRunsSeeing(ctx, 2, d)

	for _, l := range s.Launches()[launchesBefore:] {
		if l.Err == nil {
			d.LaunchesForForeignDisruption += len(l.InstanceIDs)
			s.Timeline.Printf("scenario", "Nodewright launched %v (NodePool %s, claim %s) during Karpenter's disruption", l.InstanceIDs, l.NodePool, l.Claim)
		}
	}
	s.Timeline.Printf("scenario", "Karpenter's disruption of %s: %d provisioner runs saw it, at most %d pods pending to them; pods on %s after %.1fs; Nodewright launched %d",
		old, d.ForeignDisruptionRuns, d.ForeignDisruptionPodsSeen, replacement, d.ForeignDisruptionPodsMovedAfterS, d.LaunchesForForeignDisruption)
	return nil
}

// provisionerRunsSeeing runs the provisioner (as its schedule does) until runs of them held the lease
// (at most for a minute), noting the most pending pods a run reported. It returns the runs that held the
// lease.
func (s *Sandbox) provisionerRunsSeeing(ctx context.Context, runs int, d *ForeignDisruption) int {
	held := 0
	deadline := time.Now().Add(time.Minute)
	for held < runs && time.Now().Before(deadline) && ctx.Err() == nil {
		ictx, cancel := context.WithTimeout(ctx, s.opts.FunctionTimeout)
		out := s.provision(ictx, provisioning.Trigger{})
		cancel()
		if out.Err == nil && out.Report.Lease {
			held++
			d.ForeignDisruptionPodsSeen = max(d.ForeignDisruptionPodsSeen, out.Report.PendingPods)
		}
		time.Sleep(300 * time.Millisecond)
	}
	return held
}

// evictAll evicts app's pods from node through the Eviction API, as Karpenter's drain does.
func (s *Sandbox) evictAll(ctx context.Context, namespace, app, node string) error {
	list, err := s.Client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		return fmt.Errorf("listing the %s pods: %w", app, err)
	}
	for _, p := range list.Items {
		if p.Spec.NodeName != node || p.DeletionTimestamp != nil {
			continue
		}
		err := s.Client.PolicyV1().Evictions(namespace).Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: namespace}})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("evicting %s from Karpenter's Node %s: %w", p.Name, node, err)
		}
	}
	s.Timeline.Printf("karpenter", "replacement is up: evicted the %s pods from %s", app, node)
	return nil
}

// awaitRunningOn waits (at most wait) until want of app's pods run on node.
func (s *Sandbox) awaitRunningOn(ctx context.Context, namespace, app, node string, want int, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		list, err := s.Client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: "app=" + app})
		if err != nil {
			return fmt.Errorf("listing the %s pods: %w", app, err)
		}
		n := 0
		for _, p := range list.Items {
			if p.Spec.NodeName == node && p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
				n++
			}
		}
		if n >= want {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("only %d of %d %s pods running on %s after %s", n, want, app, node, wait)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
