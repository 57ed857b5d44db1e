package sandbox

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// CoexistenceOptions shape the coexistence scenario.
type CoexistenceOptions struct {
	// ScaleUpOptions shape the scale-up and spot interruption Nodewright handles beside Karpenter.
	ScaleUpOptions
	// KarpenterNodes is how many instances Karpenter runs (default 3, one per zone).
	KarpenterNodes int
	// LifecycleFor is how long the lifecycle passes run with Karpenter's capacity in place before a
	// Nodewright Node is deleted (default 2 minutes).
	LifecycleFor time.Duration
	// DeleteTimeout bounds the wait for a deleted Node's instance to terminate and its pods to move
	// (default 3 minutes).
	DeleteTimeout time.Duration
	// NarrowedReplicas is the size of the deployment selecting a narrowed label (default 4);
	// ProvisionerRuns how many provisioner runs at least see it pending or booting (default 5).
	NarrowedReplicas int32
	ProvisionerRuns  int
}

func (o *CoexistenceOptions) defaults() {
	o.ScaleUpOptions.defaults()
	if o.KarpenterNodes <= 0 {
		o.KarpenterNodes = 3
	}
	if o.LifecycleFor <= 0 {
		o.LifecycleFor = 2 * time.Minute
	}
	if o.DeleteTimeout <= 0 {
		o.DeleteTimeout = 3 * time.Minute
	}
	if o.NarrowedReplicas <= 0 {
		o.NarrowedReplicas = 4
	}
	if o.ProvisionerRuns <= 0 {
		o.ProvisionerRuns = 5
	}
}

// CoexistenceReport is the coexistence scenario's outcome.
type CoexistenceReport struct {
	Scenario string `json:"scenario"`
	// KarpenterNodePool, ForeignInstances and ForeignNodes are Karpenter's capacity; ForeignPods the pods
	// that ran on it.
	KarpenterNodePool string   `json:"karpenterNodePool"`
	ForeignInstances  []string `json:"foreignInstances"`
	ForeignNodes      []string `json:"foreignNodes"`
	ForeignPods       int      `json:"foreignPods"`
	// SpotInterruption is the scale-up and spot interruption Nodewright handled beside Karpenter.
	SpotInterruption SpotInterruptionReport `json:"spotInterruption"`
	// LifecyclePasses and LifecycleSeconds: lifecycle passes (and their wall time) with Karpenter's
	// capacity in place before the Node deletion.
	LifecyclePasses  int     `json:"lifecyclePassesWithForeignCapacity"`
	LifecycleSeconds float64 `json:"lifecycleSecondsWithForeignCapacity"`

	// ForeignInstancesTerminated: Karpenter's instances not running at the end.
	ForeignInstancesTerminated int `json:"foreignInstancesTerminated"`
	// ForeignNodesModified: mutating requests of the functions' identity to Karpenter's Nodes (any
	// subresource), listed in ForeignNodeWrites.
	ForeignNodesModified int      `json:"foreignNodesModified"`
	ForeignNodeWrites    []string `json:"foreignNodeWrites,omitempty"`
	// ForeignPodsEvicted: pods that ran on Karpenter's Nodes the functions' identity evicted or deleted.
	ForeignPodsEvicted int `json:"foreignPodsEvicted"`
	// OwnInstancesMatchingKarpenterDiscovery: Nodewright's live instances that Karpenter's garbage
	// collection lists (v1.0 or v1.1+ filters), the most seen at any check; OwnLaunchTemplates... the
	// launch templates its launch-template clean-up would delete.
	OwnInstancesMatchingKarpenterDiscovery       int      `json:"ownInstancesMatchingKarpenterDiscovery"`
	OwnInstancesMatching                         []string `json:"ownInstancesMatching,omitempty"`
	OwnLaunchTemplatesMatchingKarpenterDiscovery int      `json:"ownLaunchTemplatesMatchingKarpenterDiscovery"`

	// The `kubectl delete node` of a Nodewright Node: its instance, its inflate pods, and how long the
	// instance took to terminate, the Node to go and the pods to run elsewhere (-1: not within the wait).
	DeletedNode                         string  `json:"deletedNode"`
	DeletedNodeInstance                 string  `json:"deletedNodeInstance"`
	DeletedNodePods                     int     `json:"deletedNodePods"`
	DeletedNodeInstanceTerminated       bool    `json:"deletedNodeInstanceTerminated"`
	DeletedNodeInstanceTerminatedAfterS float64 `json:"deletedNodeInstanceTerminatedAfterSeconds"`
	DeletedNodeGoneAfterS               float64 `json:"deletedNodeGoneAfterSeconds"`
	DeletedNodePodsRescheduledAfterS    float64 `json:"deletedNodePodsRescheduledAfterSeconds"`
	DeletedNodePodsLost                 int     `json:"deletedNodePodsLost"`
	// The Nodewright Node deleted with its finalizer stripped (stripped.go).
	StrippedNodeReport

	// The narrowed-label deployment: its selector, size, the nodes one plan needs for it, the nodes
	// launched for it over NarrowedProvisionerRuns runs, and its pods running at the end.
	NarrowedLabel            string `json:"narrowedLabel"`
	NarrowedPods             int    `json:"narrowedPods"`
	NarrowedLabelNodesNeeded int    `json:"narrowedLabelNodesNeeded"`
	NarrowedLabelLaunches    int    `json:"narrowedLabelLaunches"`
	NarrowedProvisionerRuns  int    `json:"narrowedProvisionerRuns"`
	NarrowedPodsRunning      int    `json:"narrowedPodsRunning"`

	// ForeignDisruption is Karpenter disrupting one of its own Nodes (karpenterdisruption.go).
	ForeignDisruption
	Capacity
	// PodsLost: pods missing after each disruption (spot, node deletion) and at the end (inflate and
	// Karpenter's app), summed.
	PodsLost        int             `json:"podsLost"`
	DurationSeconds float64         `json:"durationSeconds"`
	Errors          []string        `json:"errors,omitempty"`
	TargetsMet      map[string]bool `json:"targetsMet"`
}

// Worked reports whether every target was met and no component failed.
func (r CoexistenceReport) Worked() bool {
	return allMet(r.TargetsMet, r.Errors)
}

// NarrowedNodePool is the NodePool the narrowed-label deployment launches from: Karpenter's documented
// pattern of a requirement (team In [a, b]) that a pod's nodeSelector narrows (team=a).
const NarrowedNodePool = "teams"

const narrowedPoolConfig = `---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: teams
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: team, operator: In, values: ["a", "b"]}
        - {key: kubernetes.io/arch, operator: In, values: ["amd64"]}
        - {key: karpenter.k8s.aws/instance-category, operator: In, values: ["c", "m", "r"]}
        - {key: karpenter.k8s.aws/instance-generation, operator: Gt, values: ["4"]}
        - {key: karpenter.sh/capacity-type, operator: In, values: ["on-demand"]}
  limits:
    cpu: "64"
`

// Coexistence runs the coexistence scenario: Karpenter-launched capacity (instances tagged as Karpenter
// v1 tags them, Ready Nodes with its labels and finalizer, pods running) lives beside Nodewright while
// Nodewright scales up, handles a spot interruption and runs its lifecycle passes; then a Nodewright
// Node is deleted as `kubectl delete node` does, another is deleted with its finalizer stripped, and a
// deployment selects a narrowed label. Nothing of
// Karpenter's may be touched, nothing of Nodewright's may look like Karpenter's to Karpenter.
func (s *Sandbox) Coexistence(ctx context.Context, o CoexistenceOptions) (CoexistenceReport, error) {
	o.defaults()
	rep := CoexistenceReport{Scenario: "coexistence", KarpenterNodePool: KarpenterNodePool, NarrowedLabel: "team=a",
		NarrowedPods: int(o.NarrowedReplicas), DeletedNodeInstanceTerminatedAfterS: -1, DeletedNodeGoneAfterS: -1, DeletedNodePodsRescheduledAfterS: -1}
	errsBefore := len(s.Errors())
	start := time.Now()
	fc, err := s.launchKarpenterCapacity(ctx, o.KarpenterNodes, o.Namespace)
	if err != nil {
		return rep, err
	}
	rep.ForeignInstances, rep.ForeignNodes = fc.Instances, fc.Nodes
	foreignPods, err := watchPods(ctx, s.Client, o.Namespace, "app="+fc.App)
	if err != nil {
		return rep, err
	}
	defer foreignPods.close()
	since, passesBefore := time.Now(), s.Stats().LifecyclePasses

	spot, err := s.SpotInterruption(ctx, o.ScaleUpOptions)
	rep.SpotInterruption = spot
	if err != nil {
		return rep, fmt.Errorf("spot interruption beside Karpenter: %w", err)
	}
	if err := s.checkDiscovery(ctx, &rep); err != nil {
		return rep, err
	}
	for wait := time.Until(since.Add(o.LifecycleFor + s.opts.LifecycleEvery)); wait > 0 && ctx.Err() == nil; wait = time.Until(since.Add(o.LifecycleFor + s.opts.LifecycleEvery)) {
		s.Timeline.Printf("scenario", "lifecycle passes continue beside Karpenter's capacity for %.0fs more", wait.Seconds())
		time.Sleep(min(wait, 30*time.Second))
	}
	rep.LifecyclePasses, rep.LifecycleSeconds = s.Stats().LifecyclePasses-passesBefore, round3(time.Since(since).Seconds())
	s.Timeline.Printf("scenario", "%d lifecycle passes in %.0fs beside Karpenter's capacity", rep.LifecyclePasses, rep.LifecycleSeconds)
	if err := s.checkDiscovery(ctx, &rep); err != nil {
		return rep, err
	}

	if err := s.deleteNodeStep(ctx, o, &rep); err != nil {
		return rep, err
	}
	if err := s.strippedNodeStep(ctx, o, &rep.StrippedNodeReport); err != nil {
		return rep, err
	}
	if err := s.checkDiscovery(ctx, &rep); err != nil {
		return rep, err
	}
	if err := s.narrowedLabelStep(ctx, o, &rep); err != nil {
		return rep, err
	}
	if err := s.karpenterDisruptionStep(ctx, o, &fc, &rep.ForeignDisruption); err != nil {
		return rep, err
	}
	rep.ForeignInstances, rep.ForeignNodes = fc.Instances, fc.Nodes
	rep.DurationSeconds = round3(time.Since(start).Seconds())
	s.settle(ctx)
	return s.finishCoexistence(ctx, rep, fc, append(foreignPods.snapshot(), rep.ForeignDisruption.pods...), start, o, errsBefore)
}

// checkDiscovery lists Nodewright's instances as Karpenter's garbage collection would and keeps the most
// seen.
func (s *Sandbox) checkDiscovery(ctx context.Context, rep *CoexistenceReport) error {
	ids, err := s.ownInstancesMatchingKarpenterDiscovery(ctx, rep.ForeignInstances)
	if err != nil {
		return err
	}
	if len(ids) > rep.OwnInstancesMatchingKarpenterDiscovery {
		rep.OwnInstancesMatchingKarpenterDiscovery, rep.OwnInstancesMatching = len(ids), ids
	}
	if len(ids) > 0 {
		s.Timeline.Printf("karpenter", "garbage collection would list %d of Nodewright's instances as its own: %v", len(ids), ids)
	}
	return nil
}

// deleteNodeStep deletes the Nodewright Node running the most inflate pods as `kubectl delete node` does
// and waits (bounded) for its instance to terminate, the Node to go and its pods to run elsewhere.
func (s *Sandbox) deleteNodeStep(ctx context.Context, o CoexistenceOptions, rep *CoexistenceReport) error {
	victim, pods, err := s.busiestClaim(ctx, o.Namespace, "")
	if err != nil {
		return err
	}
	rep.DeletedNode, rep.DeletedNodeInstance, rep.DeletedNodePods = victim.NodeName, victim.InstanceID, pods
	s.Timeline.Restart()
	start := time.Now()
	background := metav1.DeletePropagationBackground
	if err := s.Client.CoreV1().Nodes().Delete(ctx, victim.NodeName, metav1.DeleteOptions{PropagationPolicy: &background}); err != nil {
		return fmt.Errorf("kubectl delete node %s: %w", victim.NodeName, err)
	}
	s.Timeline.Printf("scenario", "kubectl delete node %s (instance %s, %d inflate pods)", victim.NodeName, victim.InstanceID, pods)
	deadline := start.Add(o.DeleteTimeout)
	since := func() float64 { return round3(time.Since(start).Seconds()) }
	last, elsewhere := "", 0
	for {
		if rep.DeletedNodeInstanceTerminatedAfterS < 0 {
			gone, err := s.foreignInstancesTerminated(ctx, []string{victim.InstanceID})
			if err != nil {
				return err
			}
			if gone > 0 {
				rep.DeletedNodeInstanceTerminatedAfterS = since()
				s.Timeline.Printf("scenario", "instance %s of the deleted Node is terminated", victim.InstanceID)
			}
		}
		if rep.DeletedNodeGoneAfterS < 0 {
			if _, err := s.Client.CoreV1().Nodes().Get(ctx, victim.NodeName, metav1.GetOptions{}); err != nil {
				rep.DeletedNodeGoneAfterS = since()
			}
		}
		if _, elsewhere, err = s.inflateRunning(ctx, o.Namespace, victim.NodeName); err != nil {
			return err
		}
		if elsewhere >= int(o.Replicas) && rep.DeletedNodePodsRescheduledAfterS < 0 {
			rep.DeletedNodePodsRescheduledAfterS = since()
		}
		line := fmt.Sprintf("%d/%d inflate pods running on other nodes, instance terminated: %v, Node gone: %v",
			elsewhere, o.Replicas, rep.DeletedNodeInstanceTerminatedAfterS >= 0, rep.DeletedNodeGoneAfterS >= 0)
		if line != last {
			s.Timeline.Printf("progress", "%s", line)
			last = line
		}
		if rep.DeletedNodeInstanceTerminatedAfterS >= 0 && rep.DeletedNodeGoneAfterS >= 0 && rep.DeletedNodePodsRescheduledAfterS >= 0 {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			s.Timeline.Printf("scenario", "gave up waiting after %s", o.DeleteTimeout)
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	rep.DeletedNodeInstanceTerminated = rep.DeletedNodeInstanceTerminatedAfterS >= 0
	rep.DeletedNodePodsLost = max(int(o.Replicas)-elsewhere, 0)
	return nil
}

// narrowedLabelStep creates a deployment selecting team=a while no NodePool offers that label, waits
// until the scheduler has marked all its pods Unschedulable, then adds the teams NodePool, asks one plan
// how many nodes the pods need, and triggers the provisioner (as its schedule does) at least
// ProvisionerRuns times while the pods are pending or booting, counting the nodes launched for the pool.
// The pods are all pending before the pool exists so that every run sees the same pods: what is measured
// is whether runs after the first launch again for pods a claim in flight already serves (the storm the
// narrowed label used to cause), not how pods that trickle in are batched.
func (s *Sandbox) narrowedLabelStep(ctx context.Context, o CoexistenceOptions, rep *CoexistenceReport) error {
	const app = "narrow"
	deploy := pauseDeployment(app, o.Namespace, o.NarrowedReplicas, "1", "1536Mi", map[string]string{"team": "a"})
	if _, err := s.Client.AppsV1().Deployments(o.Namespace).Create(ctx, deploy, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating the %s deployment: %w", app, err)
	}
	if err := s.awaitUnschedulable(ctx, o.Namespace, deploy.Spec.Selector.MatchLabels, int(o.NarrowedReplicas)); err != nil {
		return err
	}
	if err := applyConfig(ctx, s.Store, s.opts.Config+narrowedPoolConfig); err != nil {
		return fmt.Errorf("adding NodePool %s: %w", NarrowedNodePool, err)
	}
	pods := make([]*corev1.Pod, o.NarrowedReplicas)
	for i := range pods {
		pods[i] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", app, i), Namespace: o.Namespace,
			Labels: deploy.Spec.Template.Labels}, Spec: deploy.Spec.Template.Spec}
	}
	plan, err := s.Provisioner.Plan(ctx, pods)
	if err != nil {
		return err
	}
	if len(plan.Unschedulable) > 0 {
		return fmt.Errorf("the plan cannot place the narrowed pods: %s", plan.Unschedulable[0].Reason)
	}
	rep.NarrowedLabelNodesNeeded = len(plan.NewClaims)
	s.Timeline.Restart()
	launchesBefore, solvesBefore := len(s.Launches()), s.Stats().Solves
	s.Timeline.Printf("scenario", "deployment %s: %d pods selecting team=a, all Unschedulable; NodePool %s (team In [a, b]) added; one plan needs %d nodes",
		app, o.NarrowedReplicas, NarrowedNodePool, rep.NarrowedLabelNodesNeeded)
	start := time.Now()
	for {
		running, _, err := s.podsRunning(ctx, o.Namespace, app, "")
		if err != nil {
			return err
		}
		rep.NarrowedPodsRunning, rep.NarrowedProvisionerRuns = running, s.Stats().Solves-solvesBefore
		runs := rep.NarrowedProvisionerRuns
		if runs >= o.ProvisionerRuns && (running >= int(o.NarrowedReplicas) || runs >= 2*o.ProvisionerRuns) {
			break
		}
		if time.Since(start) > 2*time.Minute || ctx.Err() != nil {
			s.Timeline.Printf("scenario", "gave up waiting for the %s pods after 2m", app)
			break
		}
		ictx, cancel := context.WithTimeout(ctx, s.opts.FunctionTimeout)
		s.backstop(ictx)
		cancel()
		time.Sleep(300 * time.Millisecond)
	}
	for _, l := range s.Launches()[launchesBefore:] {
		if l.NodePool == NarrowedNodePool && l.Err == nil {
			rep.NarrowedLabelLaunches += len(l.InstanceIDs)
		}
	}
	s.Timeline.Printf("scenario", "%d/%d %s pods running; %d nodes launched for NodePool %s over %d provisioner runs (one plan needs %d)",
		rep.NarrowedPodsRunning, o.NarrowedReplicas, app, rep.NarrowedLabelLaunches, NarrowedNodePool, rep.NarrowedProvisionerRuns, rep.NarrowedLabelNodesNeeded)
	return nil
}

func (s *Sandbox) finishCoexistence(ctx context.Context, rep CoexistenceReport, fc foreignCapacity, foreignPods []podTimes,
	since time.Time, o CoexistenceOptions, errsBefore int) (CoexistenceReport, error) {
	var err error
	if rep.ForeignInstancesTerminated, err = s.foreignInstancesTerminated(ctx, fc.Instances); err != nil {
		return rep, err
	}
	if err := s.checkDiscovery(ctx, &rep); err != nil {
		return rep, err
	}
	if rep.OwnLaunchTemplatesMatchingKarpenterDiscovery, err = s.ownLaunchTemplatesMatchingKarpenterDiscovery(ctx); err != nil {
		return rep, err
	}
	s.countForeignWrites(&rep, fc, foreignPods, since)
	inflateRunning, _, err := s.inflateRunning(ctx, o.Namespace, "")
	if err != nil {
		return rep, err
	}
	foreignRunning, _, err := s.podsRunning(ctx, o.Namespace, fc.App, "")
	if err != nil {
		return rep, err
	}
	rep.PodsLost = rep.SpotInterruption.PodsLost + rep.DeletedNodePodsLost + rep.StrippedNodePodsLost + rep.ForeignDisruptionPodsLost +
		max(int(o.Replicas)-inflateRunning, 0) + max(fc.Replicas-foreignRunning, 0)
	if rep.Capacity, err = s.capacity(ctx); err != nil {
		return rep, err
	}
	for _, e := range s.Errors()[errsBefore:] {
		rep.Errors = append(rep.Errors, e.Error())
	}
	spot := rep.SpotInterruption.TargetsMet
	rep.TargetsMet = map[string]bool{
		"foreignInstancesTerminated=0":                   rep.ForeignInstancesTerminated == 0,
		"foreignNodesModified=0":                         rep.ForeignNodesModified == 0,
		"foreignPodsEvicted=0":                           rep.ForeignPodsEvicted == 0,
		"ownInstancesMatchingKarpenterDiscovery=0":       rep.OwnInstancesMatchingKarpenterDiscovery == 0,
		"ownLaunchTemplatesMatchingKarpenterDiscovery=0": rep.OwnLaunchTemplatesMatchingKarpenterDiscovery == 0,
		"lifecycleRanBesideKarpenter>=2m":                rep.LifecyclePasses > 0 && rep.LifecycleSeconds >= o.LifecycleFor.Seconds(),
		"spotInterruptionHandled":                        spot["nodeGoneWithinNotice"] && spot["noPodsLost"],
		"deletedNodeInstanceTerminated":                  rep.DeletedNodeInstanceTerminated,
		"deletedNodePodsLost=0":                          rep.DeletedNodePodsLost == 0 && rep.DeletedNodePodsRescheduledAfterS >= 0,
		"narrowedLabelLaunches=narrowedLabelNodesNeeded": rep.NarrowedLabelNodesNeeded > 0 && rep.NarrowedLabelLaunches == rep.NarrowedLabelNodesNeeded && rep.NarrowedProvisionerRuns >= o.ProvisionerRuns,
		"narrowedPodsRunning":                            rep.NarrowedPodsRunning == rep.NarrowedPods,
		"noLeakedInstances":                              rep.LeakedInstances == 0 && len(rep.Leaks) == 0,
		"noPodsLost":                                     rep.PodsLost == 0,
	}
	rep.foreignDisruptionTargets(rep.TargetsMet, o.ProvisionerRuns)
	rep.StrippedNodeReport.targets(rep.TargetsMet)
	var missed []string
	for k, ok := range rep.TargetsMet {
		if !ok {
			missed = append(missed, k)
		}
	}
	sort.Strings(missed)
	s.Timeline.Printf("scenario", "done: Karpenter's instances terminated %d, Node writes %d, pods evicted %d; ours Karpenter would collect %d; deleted Node's instance terminated: %v (%.1fs), pods lost %d; narrowed label: %d launched, %d needed; leaked %d; targets missed: %s",
		rep.ForeignInstancesTerminated, rep.ForeignNodesModified, rep.ForeignPodsEvicted, rep.OwnInstancesMatchingKarpenterDiscovery,
		rep.DeletedNodeInstanceTerminated, rep.DeletedNodeInstanceTerminatedAfterS, rep.DeletedNodePodsLost, rep.NarrowedLabelLaunches,
		rep.NarrowedLabelNodesNeeded, rep.LeakedInstances, strings.Join(missed, ", "))
	return rep, nil
}

// countForeignWrites counts the functions' writes since the foreign capacity existed that targeted
// Karpenter's Nodes, and the pods that ran on them it evicted or deleted.
func (s *Sandbox) countForeignWrites(rep *CoexistenceReport, fc foreignCapacity, foreignPods []podTimes, since time.Time) {
	nodes := map[string]bool{}
	for _, n := range fc.Nodes {
		nodes[n] = true
	}
	pods := map[string]bool{}
	for _, p := range foreignPods {
		if nodes[p.Node] {
			pods[p.Name] = true
		}
	}
	rep.ForeignPods = len(pods)
	evicted := map[string]bool{}
	for _, w := range s.FunctionWrites() {
		if w.At.Before(since) {
			continue
		}
		if nodes[w.Node()] {
			rep.ForeignNodesModified++
			if len(rep.ForeignNodeWrites) < 20 {
				rep.ForeignNodeWrites = append(rep.ForeignNodeWrites, w.Method+" "+w.Path)
			}
		}
		if _, name, sub, ok := w.Pod(); ok && pods[name] &&
			((w.Method == "POST" && sub == "eviction") || (w.Method == "DELETE" && sub == "")) {
			evicted[name] = true
		}
	}
	rep.ForeignPodsEvicted = len(evicted)
}

// awaitUnschedulable waits (at most a minute) until want pods matching selector in namespace carry the
// scheduler's PodScheduled=False condition with reason Unschedulable.
func (s *Sandbox) awaitUnschedulable(ctx context.Context, namespace string, selector map[string]string, want int) error {
	deadline := time.Now().Add(time.Minute)
	for {
		list, err := s.Client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{
			LabelSelector: labels.SelectorFromSet(selector).String()})
		if err != nil {
			return fmt.Errorf("listing pods %v: %w", selector, err)
		}
		n := 0
		for _, p := range list.Items {
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
					n++
				}
			}
		}
		if n >= want {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("only %d of %d pods %v were marked Unschedulable within a minute", n, want, selector)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
