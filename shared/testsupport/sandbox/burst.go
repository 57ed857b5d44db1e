package sandbox

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// BurstOptions shape the burst scenario.
type BurstOptions struct {
	// Replicas the burst deployment scales to at once (default 1,000); CPU and Memory each replica
	// requests (default 700m and 512Mi: five to a 4-vCPU node, so 1,000 pods need 200 nodes).
	Replicas    int32
	CPU, Memory string
	// Namespace (default "default") and Timeout for every pod to run (default 5 minutes).
	Namespace string
	Timeout   time.Duration
}

func (o *BurstOptions) defaults() {
	if o.Replicas <= 0 {
		o.Replicas = DefaultBurstReplicas
	}
	if o.CPU == "" {
		o.CPU = "700m"
	}
	if o.Memory == "" {
		o.Memory = "512Mi"
	}
	if o.Namespace == "" {
		o.Namespace = "default"
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Minute
	}
}

// DefaultBurstReplicas is the burst scenario's default size: 1,000 pods on 200 nodes.
const DefaultBurstReplicas = 1000

// BurstNodePool is the burst scenario's own NodePool; its pods select it by the karpenter.sh/nodepool
// label, so the sample pool's larger types are never an option.
const BurstNodePool = "burst"

// burstPoolConfig allows only 4-vCPU c/m/r types (a 700m pod fits five times in their 3.92 allocatable
// vCPUs) and a CPU limit far above a thousand-pod burst's 800 vCPUs.
const burstPoolConfig = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: ` + BurstNodePool + `
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: kubernetes.io/arch, operator: In, values: ["amd64"]}
        - {key: karpenter.k8s.aws/instance-category, operator: In, values: ["c", "m", "r"]}
        - {key: karpenter.k8s.aws/instance-generation, operator: Gt, values: ["4"]}
        - {key: karpenter.k8s.aws/instance-cpu, operator: In, values: ["4"]}
        - {key: karpenter.sh/capacity-type, operator: In, values: ["spot", "on-demand"]}
  limits:
    cpu: "20000"
  disruption:
    consolidateAfter: Never
`

// BurstReport is the burst scenario's outcome.
type BurstReport struct {
	Scenario      string `json:"scenario"`
	PodsRequested int    `json:"podsRequested"`
	PodsBound     int    `json:"podsBound"`
	PodsRunning   int    `json:"podsRunning"`
	// Capacity holds nodesLaunched (the live claims past launch) and leakedInstances.
	Capacity
	// CreateFleetCalls made during the scenario (FailedCreateFleetCalls of them answered with an error),
	// and the InstancesLaunched their answers held: fewer calls than nodes means launches were batched.
	CreateFleetCalls       int `json:"createFleetCalls"`
	FailedCreateFleetCalls int `json:"failedCreateFleetCalls"`
	InstancesLaunched      int `json:"instancesLaunched"`
	// DuplicateLaunches: instances launched beyond one per claim (launched instances no claim records).
	DuplicateLaunches int `json:"duplicateLaunches"`
	// LaunchesIssuedAfterSeconds: from the first pod marked Unschedulable to the last CreateFleet
	// answered; AllBoundAfterSeconds: to the last pod bound (-1: none, or not every pod bound).
	LaunchesIssuedAfterSeconds float64 `json:"launchesIssuedAfterSeconds"`
	AllBoundAfterSeconds       float64 `json:"allBoundAfterSeconds"`
	// LastUnschedulableAfterSeconds: from the first pod marked Unschedulable to the last pod first
	// marked so. Nodewright cannot launch for a pod before kube-scheduler marks it, so this is the part of
	// LaunchesIssuedAfterSeconds that is the scheduler's pace, not Nodewright's (-1: no pod was marked).
	LastUnschedulableAfterSeconds float64 `json:"lastUnschedulableAfterSeconds"`
	// WebhookHandlerSeconds is the pending-pod webhook's handler time per request (WebhookRequests of
	// them): the API server's write of kube-scheduler's FailedScheduling Event waits for it (the
	// scheduling loop does not).
	WebhookHandlerSeconds Percentiles `json:"webhookHandlerSeconds"`
	WebhookRequests       int         `json:"webhookRequests"`
	// ProvisionerInvocations and Solves count the provisioner's work.
	ProvisionerInvocations int      `json:"provisionerInvocations"`
	Solves                 int      `json:"solves"`
	NodeBootSeconds        float64  `json:"nodeBootSeconds"`
	DurationSeconds        float64  `json:"durationSeconds"`
	Errors                 []string `json:"errors,omitempty"`
	// Targets: every launch issued within 60 s of the first Unschedulable pod, every pod bound,
	// batched launches, nothing leaked, nothing launched twice.
	TargetsMet map[string]bool `json:"targetsMet"`
}

// Worked says whether the burst's loop completed: every pod bound, nothing leaked or launched twice,
// no component error. The 60 s target is reported, not required (it measures the machine as well).
func (r BurstReport) Worked() bool {
	return r.PodsBound == r.PodsRequested && r.LeakedInstances == 0 && len(r.Leaks) == 0 && r.DuplicateLaunches == 0 &&
		len(r.Errors) == 0
}

// Burst runs the burst scenario: a deployment of pods that only fit the burst NodePool's 4-vCPU nodes
// goes from 0 to Replicas at once; Nodewright launches the nodes in batches, they join and the pods bind.
func (s *Sandbox) Burst(ctx context.Context, o BurstOptions) (BurstReport, error) {
	o.defaults()
	rep := BurstReport{Scenario: "burst", PodsRequested: int(o.Replicas), NodeBootSeconds: s.opts.BootDelay.Seconds(),
		LaunchesIssuedAfterSeconds: -1, AllBoundAfterSeconds: -1, LastUnschedulableAfterSeconds: -1}
	if err := applyConfig(ctx, s.Store, burstPoolConfig); err != nil {
		return rep, fmt.Errorf("adding NodePool %s: %w", BurstNodePool, err)
	}
	s.Timeline.Printf("scenario", "NodePool %s: 4-vCPU c/m/r types, spot and on-demand, cpu limit 20000", BurstNodePool)
	deploy := pauseDeployment("burst", o.Namespace, 0, o.CPU, o.Memory, map[string]string{scheduling.LabelNodePool: BurstNodePool})
	if _, err := s.Client.AppsV1().Deployments(o.Namespace).Create(ctx, deploy, metav1.CreateOptions{}); err != nil {
		return rep, fmt.Errorf("creating the burst deployment: %w", err)
	}
	watch, err := watchPods(ctx, s.Client, o.Namespace, "app=burst")
	if err != nil {
		return rep, err
	}
	defer watch.close()
	before, errsBefore, launchesBefore, webhookBefore := s.Stats(), len(s.Errors()), len(s.Launches()), len(s.WebhookLatencies())

	s.Timeline.Restart()
	start := time.Now()
	patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, o.Replicas)
	if _, err := s.Client.AppsV1().Deployments(o.Namespace).Patch(ctx, "burst", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		return rep, fmt.Errorf("scaling burst: %w", err)
	}
	s.Timeline.Printf("scenario", "scaled deployment burst from 0 to %d replicas (%s CPU, %s each)", o.Replicas, o.CPU, o.Memory)
	s.awaitRunning(ctx, watch, int(o.Replicas), o.Timeout)
	rep.DurationSeconds = round3(time.Since(start).Seconds())
	s.settle(ctx)
	hooks := s.WebhookLatencies()[webhookBefore:]
	rep.WebhookHandlerSeconds, rep.WebhookRequests = percentiles(hooks), len(hooks)
	return s.finishBurst(ctx, rep, watch.snapshot(), s.Launches()[launchesBefore:], before, errsBefore)
}

// awaitRunning prints progress until want pods of the watch run or the timeout passes.
func (s *Sandbox) awaitRunning(ctx context.Context, watch *podWatch, want int, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	last := ""
	for {
		created, unsched, bound, running := 0, 0, 0, 0
		for _, p := range watch.snapshot() {
			if !p.Deleted.IsZero() {
				continue
			}
			created++
			if !p.Unschedulable.IsZero() && p.Bound.IsZero() {
				unsched++
			}
			if !p.Bound.IsZero() {
				bound++
			}
			if !p.Running.IsZero() {
				running++
			}
		}
		line := fmt.Sprintf("%d/%d pods created, %d bound, %d running, %d waiting as Unschedulable, %d CreateFleet calls",
			created, want, bound, running, unsched, len(s.Launches()))
		if line != last {
			s.Timeline.Printf("progress", "%s", line)
			last = line
		}
		if running >= want {
			return
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			s.Timeline.Printf("scenario", "gave up waiting after %s", timeout)
			return
		}
		time.Sleep(time.Second)
	}
}

func (s *Sandbox) finishBurst(ctx context.Context, rep BurstReport, pods []podTimes, launches []Launch, before Stats, errsBefore int) (BurstReport, error) {
	var firstUnsched, lastUnsched, lastBound, lastAnswer time.Time
	for _, p := range pods {
		if !p.Deleted.IsZero() {
			continue
		}
		if !p.Unschedulable.IsZero() && (firstUnsched.IsZero() || p.Unschedulable.Before(firstUnsched)) {
			firstUnsched = p.Unschedulable
		}
		lastUnsched = later(lastUnsched, p.Unschedulable)
		if !p.Bound.IsZero() {
			rep.PodsBound++
			lastBound = later(lastBound, p.Bound)
		}
		if !p.Running.IsZero() {
			rep.PodsRunning++
		}
	}
	launched := map[string]bool{}
	for _, l := range launches {
		rep.CreateFleetCalls++
		if l.Err != nil {
			rep.FailedCreateFleetCalls++
		}
		lastAnswer = later(lastAnswer, l.Answered)
		for _, id := range l.InstanceIDs {
			launched[id] = true
		}
	}
	rep.InstancesLaunched = len(launched)
	if !firstUnsched.IsZero() && !lastAnswer.IsZero() {
		rep.LaunchesIssuedAfterSeconds = round3(lastAnswer.Sub(firstUnsched).Seconds())
	}
	if !firstUnsched.IsZero() {
		rep.LastUnschedulableAfterSeconds = round3(lastUnsched.Sub(firstUnsched).Seconds())
	}
	if !firstUnsched.IsZero() && rep.PodsBound == rep.PodsRequested {
		rep.AllBoundAfterSeconds = round3(lastBound.Sub(firstUnsched).Seconds())
	}
	claims, err := s.Store.ListAllClaims(ctx) // a claim deleted since its launch still owned its instance
	if err != nil {
		return rep, err
	}
	owned := 0
	for _, c := range claims {
		if launched[c.InstanceID] {
			owned++
		}
	}
	rep.DuplicateLaunches = rep.InstancesLaunched - owned
	after := s.Stats()
	rep.ProvisionerInvocations = after.ProvisionerInvocations - before.ProvisionerInvocations
	rep.Solves = after.Solves - before.Solves
	if rep.Capacity, err = s.capacity(ctx); err != nil {
		return rep, err
	}
	for _, e := range s.Errors()[errsBefore:] {
		rep.Errors = append(rep.Errors, e.Error())
	}
	rep.TargetsMet = map[string]bool{
		"launchesIssuedWithin60s": rep.LaunchesIssuedAfterSeconds >= 0 && rep.LaunchesIssuedAfterSeconds <= 60,
		"everyPodBound":           rep.PodsBound == rep.PodsRequested,
		"batched":                 rep.CreateFleetCalls < rep.Nodes,
		"noLeakedInstances":       rep.LeakedInstances == 0 && len(rep.Leaks) == 0,
		"noDuplicateLaunches":     rep.DuplicateLaunches == 0,
	}
	s.Timeline.Printf("scenario", "done: %d/%d pods bound on %d nodes from %d CreateFleet calls; launches issued %.3fs after the first Unschedulable pod (the last pod was marked after %.3fs), all bound after %.3fs; %d duplicate launches, %d leaked",
		rep.PodsBound, rep.PodsRequested, rep.Nodes, rep.CreateFleetCalls, rep.LaunchesIssuedAfterSeconds, rep.LastUnschedulableAfterSeconds, rep.AllBoundAfterSeconds,
		rep.DuplicateLaunches, rep.LeakedInstances)
	return rep, nil
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
