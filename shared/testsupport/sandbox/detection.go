package sandbox

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/kube"
)

// DetectionOptions shape the detection scenario.
type DetectionOptions struct {
	// Pods each pass creates (default DefaultDetectionPods), each requesting CPU and Memory (default 250m
	// and 256Mi).
	Pods        int
	CPU, Memory string
	// WebhookDelay is added to every webhook answer in the pass with detection (default 50 ms): a slow
	// path to the Function URL.
	WebhookDelay time.Duration
	// Timeout bounds each wait: every pod marked, every pod bound (default 5 minutes).
	Timeout time.Duration
	// Pairs is how many times the two scheduler passes (without detection, then with it) alternate
	// (default 3): the rates are medians over the pairs, since everything else the sandbox runs shares the
	// machine's two cores with kube-scheduler.
	Pairs int
	// PacedPodsPerSecond is how fast the paced pairs create their pods (default DefaultPacedPodsPerSecond).
	PacedPodsPerSecond float64
}

// DefaultPacedPodsPerSecond: pods no NodePool serves, created this fast, keep kube-scheduler busy (about
// four attempts a pod, 120 a second) while the control plane's one CPU here has some to spare even when
// the machine is slow, as a cluster's control plane does. Measured 2026-12-03: at 30 a second the pairs'
// ratios were 0.97-1.00; at 50 they were 0.96-1.03 while the machine was fast and 0.85 when it slowed
// (the same pass took 2.3 times the API server's CPU); at 100 the CPU was saturated (0.85-0.94).
const DefaultPacedPodsPerSecond = 30

// DefaultDetectionPods is the detection scenario's default pod count.
const DefaultDetectionPods = 1000

func (o *DetectionOptions) defaults() {
	if o.Pods <= 0 {
		o.Pods = DefaultDetectionPods
	}
	if o.CPU == "" {
		o.CPU = "250m"
	}
	if o.Memory == "" {
		o.Memory = "256Mi"
	}
	if o.WebhookDelay <= 0 {
		o.WebhookDelay = 50 * time.Millisecond
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Minute
	}
	if o.Pairs <= 0 {
		o.Pairs = 3
	}
	if o.PacedPodsPerSecond <= 0 {
		o.PacedPodsPerSecond = DefaultPacedPodsPerSecond
	}
}

// SchedulerRates are kube-scheduler's scheduling attempts per second in each pass.
type SchedulerRates struct {
	WithDetection float64 `json:"withDetection"`
	Without       float64 `json:"without"`
}

// PassCPU is the CPU time, in seconds, the control plane's processes, moto and this process used during
// one scheduler pass (utime + stime from /proc, to 10 ms), and in the pass with detection the webhook's
// requests and the connections the API server opened for them.
type PassCPU struct {
	APIServer float64 `json:"kubeAPIServer"`
	Scheduler float64 `json:"kubeScheduler"`
	Etcd      float64 `json:"etcd"`
	// Functions is this process's (the functions', the webhook's, the scenario's own), Moto moto's.
	Functions          float64 `json:"functions"`
	Moto               float64 `json:"moto"`
	WebhookCalls       int     `json:"webhookCalls,omitempty"`
	WebhookConnections int     `json:"webhookConnections,omitempty"`
}

// PairCPU is what each pass of a pair cost the control plane.
type PairCPU struct {
	Without       PassCPU `json:"without"`
	WithDetection PassCPU `json:"withDetection"`
}

// DetectionReport is the detection scenario's outcome.
type DetectionReport struct {
	Scenario            string  `json:"scenario"`
	Pods                int     `json:"pods"`
	WebhookDelaySeconds float64 `json:"webhookDelaySeconds"`
	// SchedulerAttemptsPerSecond: kube-scheduler's scheduling attempts (its
	// scheduler_schedule_attempts_total counter) over the time from the first pod's creation to the
	// moment every pod had been tried, in the pass without detection registered and the pass with it
	// (the same pods). Pods are created by 16 writers at once, so the scheduler has a queue to work
	// through.
	// The rates are the medians over the pairs of passes, the ratio the median of the pairs' ratios.
	SchedulerAttemptsPerSecond SchedulerRates `json:"schedulerAttemptsPerSecond"`
	SchedulerAttemptsRatio     float64        `json:"schedulerAttemptsRatio"`
	// ControlPlaneSeparated: during the pairs the control plane had a CPU to itself, and moto and the
	// functions the other CPUs (separateControlPlane); false on a one-CPU machine.
	ControlPlaneSeparated bool `json:"controlPlaneSeparated"`
	// SchedulerAttemptsPerSecondByPair are the rates of each pair, in the order they ran.
	SchedulerAttemptsPerSecondByPair []SchedulerRates `json:"schedulerAttemptsPerSecondByPair"`
	// ControlPlaneCPUSecondsByPair is what each pass of each pair cost kube-apiserver, kube-scheduler and
	// etcd, in the order the pairs ran. With the control plane separated they share one CPU, so what the
	// webhook's calls cost the API server is taken from kube-scheduler. The difference between the passes
	// is not the calls' cost alone: a pass that lasts longer also retries more pods (see
	// BenchmarkAPIServerCPUPerWebhookCall in shared/adapters/footprint for the cost of a call).
	ControlPlaneCPUSecondsByPair []PairCPU `json:"controlPlaneCPUSecondsByPair"`
	// SchedulerAttemptsPerSecondIfOnTheLoop is the most kube-scheduler could make if each failure waited
	// for the webhook's delayed answer inside its loop (1 / WebhookDelay), as a webhook on pods/status
	// made it: the measured rate with detection is compared with it.
	SchedulerAttemptsPerSecondIfOnTheLoop float64 `json:"schedulerAttemptsPerSecondIfOnTheLoop"`
	// SchedulerStatusWriteMillis is the mean latency, in milliseconds, of kube-scheduler's PATCH requests
	// in each pass (its client's rest_client_request_duration_seconds; medians over the pairs): the pods'
	// status writes, which its loop waits for. Detection on the loop, as a webhook on pods/status was,
	// would add the webhook's delay to each; detection on Events adds only what a busier API server takes.
	SchedulerStatusWriteMillis SchedulerRates `json:"schedulerStatusWriteMillis"`
	// CreationToFirstAttemptP99Seconds: in each pass, the 99th percentile of the time from a pod's
	// creation to kube-scheduler's first verdict on it (medians over the pairs).
	CreationToFirstAttemptP99Seconds SchedulerRates `json:"creationToFirstAttemptP99Seconds"`
	// Paced is the same comparison over pairs whose pods are created PacedPodsPerSecond, after the
	// pairs above. Those keep the control plane's one CPU saturated from the first pod to the last, so
	// they measure what detection costs kube-apiserver (its CPU per webhook call) as much as what it costs
	// kube-scheduler; a cluster's control plane has CPU to spare, and these pairs give it some. Detection
	// on the scheduler's loop would fail them as well: each pod waiting WebhookDelay inside the loop
	// caps the attempts at SchedulerAttemptsPerSecondIfOnTheLoop, below what the arrivals need.
	Paced SchedulerComparison `json:"paced"`
	// PendingToWakeUpSeconds: in the launch pass, from a pod's Unschedulable mark to the webhook's answer
	// for its Event, which has sent the pod's wake-up to the provisioning queue (zero when the answer came
	// first: kube-scheduler writes the Event before it stores the status). It is detection's own share of
	// pending → launch; the rest is the provisioner's runs.
	PendingToWakeUpSeconds Percentiles `json:"pendingToWakeUpSeconds"`
	// PendingToLaunchSeconds: in the launch pass, from a pod's Unschedulable mark to the CreateFleet call
	// of the first claim that covered it: launched for it, or in flight when the first run that saw it
	// placed it there (see pendingToLaunch).
	PendingToLaunchSeconds Percentiles `json:"pendingToLaunchSeconds"`
	// PendingToBoundNodeLaunchSeconds is the same to the CreateFleet of the node kube-scheduler bound the
	// pod to: later than its own claim's when the scheduler put it on a node launched for other pods.
	PendingToBoundNodeLaunchSeconds Percentiles `json:"pendingToBoundNodeLaunchSeconds"`
	// WebhookCallsPerPendingPod: the webhook's requests in the launch pass over the pods kube-scheduler
	// failed in it (nodes join during it, and the scheduler fails the pods that still do not fit again).
	WebhookCallsPerPendingPod float64 `json:"webhookCallsPerPendingPod"`
	WebhookRequests           int     `json:"webhookRequests"`
	PodsMarked                int     `json:"podsMarked"`
	PodsBound                 int     `json:"podsBound"`
	// LaunchesWithout counts CreateFleet calls in the scheduler passes: their pods ask for a label no
	// NodePool offers, so it must be zero.
	LaunchesWithout int `json:"launchesWithout"`
	Capacity
	DurationSeconds float64  `json:"durationSeconds"`
	Errors          []string `json:"errors,omitempty"`
	// Targets: ratio ≥ 0.95, pending→launch p50 ≤ 1 s, at most 3 webhook calls per pending pod, every pod
	// bound, nothing leaked.
	TargetsMet map[string]bool `json:"targetsMet"`
}

// Worked says whether the loop completed: every pod of the launch pass bound, nothing leaked, no
// component error.
func (r DetectionReport) Worked() bool {
	return r.PodsBound == r.Pods && r.LeakedInstances == 0 && len(r.Leaks) == 0 && len(r.Errors) == 0
}

// unserved is the node selector of the pods of the scheduler passes: a label no NodePool offers, so
// nothing launches for them and kube-scheduler's work is the same in both.
var unserved = map[string]string{"nodewright.sh/detection-scenario": "unserved"}

// Detection runs the detection scenario: Pairs pairs of scheduler passes with the pods created as fast as
// they can be, Pairs pairs with them created PacedPodsPerSecond, then a launch pass, o.Pods pods each.
//
//   - Without: no webhook registered; pods no NodePool can serve (nothing launches, so no node joins and
//     the scheduler's work is only to fail each pod).
//   - With: the same pods with the webhook registered and each answer delayed by WebhookDelay: detection
//     that sat on the scheduler's loop would slow this pass by the delay per pod.
//   - Launch: with the webhook still registered and delayed, pods Nodewright launches nodes for: pending →
//     wake-up, pending → launch and the webhook's calls per pending pod, as nodes join and the scheduler
//     fails the rest again.
//
// The pairs give the scheduler's attempt rates; the sandbox's components share the machine's CPUs with
// kube-scheduler, so run it on a quiet machine.
func (s *Sandbox) Detection(ctx context.Context, o DetectionOptions) (DetectionReport, error) {
	o.defaults()
	rep := DetectionReport{Scenario: "detection", Pods: o.Pods, WebhookDelaySeconds: o.WebhookDelay.Seconds(),
		SchedulerAttemptsPerSecondIfOnTheLoop: round3(1 / o.WebhookDelay.Seconds())}
	start := time.Now()
	errsBefore := len(s.Errors())
	launches := len(s.Launches())
	defer s.hook.delay.Store(0)

	restore, separated, err := s.separateControlPlane()
	if err != nil {
		return rep, err
	}
	rep.ControlPlaneSeparated = separated
	saturated, err := s.compareScheduler(ctx, o, 0)
	if err == nil {
		rep.Paced, err = s.compareScheduler(ctx, o, o.PacedPodsPerSecond)
	}
	restore()
	if err != nil {
		return rep, err
	}
	rep.SchedulerAttemptsPerSecond, rep.SchedulerAttemptsRatio = saturated.SchedulerAttemptsPerSecond, saturated.SchedulerAttemptsRatio
	rep.SchedulerStatusWriteMillis, rep.CreationToFirstAttemptP99Seconds = saturated.SchedulerStatusWriteMillis, saturated.CreationToFirstAttemptP99Seconds
	rep.SchedulerAttemptsPerSecondByPair, rep.ControlPlaneCPUSecondsByPair = saturated.ByPair, saturated.CPUByPair
	rep.LaunchesWithout = len(s.Launches()) - launches

	s.hook.delay.Store(int64(o.WebhookDelay)) // the last pair left the webhook registered
	s.Timeline.Printf("scenario", "launch pass: detection registered, each answer delayed %s; %d pods Nodewright launches for", o.WebhookDelay, o.Pods)
	hooksBefore := s.hook.count()
	launch, err := s.schedulerPass(ctx, "detection-launch", o, nil, 0)
	if err != nil {
		return rep, err
	}
	defer launch.watch.close()
	deadline := time.Now().Add(o.Timeout)
	for bound(launch.watch.snapshot()) < o.Pods && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(250 * time.Millisecond)
	}
	s.settle(ctx)
	pods := launch.watch.snapshot()
	rep.WebhookRequests = s.hook.count() - hooksBefore
	for _, p := range pods {
		if !p.Unschedulable.IsZero() {
			rep.PodsMarked++
		}
	}
	rep.PodsBound = bound(pods)
	if rep.PodsMarked > 0 {
		rep.WebhookCallsPerPendingPod = round3(float64(rep.WebhookRequests) / float64(rep.PodsMarked))
	}
	rep.PendingToWakeUpSeconds = s.pendingToWakeUp(pods)
	if rep.PendingToLaunchSeconds, rep.PendingToBoundNodeLaunchSeconds, err = s.launchLatencies(ctx, pods); err != nil {
		return rep, err
	}
	if rep.Capacity, err = s.capacity(ctx); err != nil {
		return rep, err
	}
	for _, e := range s.Errors()[errsBefore:] {
		rep.Errors = append(rep.Errors, e.Error())
	}
	rep.DurationSeconds = time.Since(start).Seconds()
	rep.TargetsMet = map[string]bool{
		"schedulerAttemptsRatio>=0.95": rep.SchedulerAttemptsRatio >= 0.95,
		"pendingToLaunchP50<=1s":       rep.PendingToLaunchSeconds.N > 0 && rep.PendingToLaunchSeconds.P50 <= 1,
		"webhookCallsPerPendingPod<=3": rep.PodsMarked > 0 && rep.WebhookCallsPerPendingPod <= 3,
		"nothingLaunchedWithoutAPool":  rep.LaunchesWithout == 0,
		"everyPodBound":                rep.PodsBound == rep.Pods,
		"noLeakedInstances":            rep.LeakedInstances == 0 && len(rep.Leaks) == 0,
	}
	s.Timeline.Printf("scenario", "done: scheduler %.1f attempts/s with detection, %.1f without (median ratio %.3f over %d pairs), status writes %.1f ms with detection, %.1f without; pods created %g a second: %.1f attempts/s with detection, %.1f without (median ratio %.3f), first verdict p99 %.3fs with, %.3fs without; pending→wake-up p50 %.3fs p99 %.3fs; pending→launch p50 %.3fs p99 %.3fs; %.2f webhook calls per pending pod; %d/%d bound; leaked %d",
		rep.SchedulerAttemptsPerSecond.WithDetection, rep.SchedulerAttemptsPerSecond.Without, rep.SchedulerAttemptsRatio, o.Pairs,
		rep.SchedulerStatusWriteMillis.WithDetection, rep.SchedulerStatusWriteMillis.Without, rep.Paced.PodsPerSecond,
		rep.Paced.SchedulerAttemptsPerSecond.WithDetection, rep.Paced.SchedulerAttemptsPerSecond.Without, rep.Paced.SchedulerAttemptsRatio,
		rep.Paced.CreationToFirstAttemptP99Seconds.WithDetection, rep.Paced.CreationToFirstAttemptP99Seconds.Without,
		rep.PendingToWakeUpSeconds.P50, rep.PendingToWakeUpSeconds.P99,
		rep.PendingToLaunchSeconds.P50, rep.PendingToLaunchSeconds.P99, rep.WebhookCallsPerPendingPod, rep.PodsBound, rep.Pods, rep.LeakedInstances)
	return rep, nil
}

// deletePods deletes every pod of namespace and waits, at most timeout, until they are gone. On a busy
// machine one DeleteCollection of a thousand pods can outlast the API server's request timeout (it
// answers 504 and goes on deleting), so a request that failed for a transient reason (kube.Transient) is
// sent again until the pods are gone or timeout has passed.
func (s *Sandbox) deletePods(ctx context.Context, namespace string, timeout time.Duration) error {
	zero := int64(0)
	deadline := time.Now().Add(timeout)
	deleted := false
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if !deleted {
			err := s.Client.CoreV1().Pods(namespace).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero},
				metav1.ListOptions{})
			switch {
			case err == nil:
				deleted = true
			case !kube.Transient(err):
				return fmt.Errorf("deleting the pods of %s: %w", namespace, err)
			default:
				s.Timeline.Printf("scenario", "deleting the pods of %s: %v; asking again", namespace, err)
			}
		}
		list, err := s.Client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{Limit: 1})
		if err != nil && !kube.Transient(err) {
			return err
		}
		if err == nil && len(list.Items) == 0 {
			return nil
		}
		time.Sleep(250 * time.Millisecond)
	}
	return fmt.Errorf("the pods of %s were not gone within %s", namespace, timeout)
}

func bound(pods []podTimes) int {
	n := 0
	for _, p := range pods {
		if !p.Bound.IsZero() && p.Deleted.IsZero() {
			n++
		}
	}
	return n
}

// pendingToWakeUp is, for each pod marked Unschedulable, the time from its mark to the webhook's first
// answer for an Event about it (zero when the answer came first).
func (s *Sandbox) pendingToWakeUp(pods []podTimes) Percentiles {
	var ds []time.Duration
	for _, p := range pods {
		if p.Unschedulable.IsZero() {
			continue
		}
		if at, ok := s.hook.answeredAt(p.UID); ok {
			ds = append(ds, max(at.Sub(p.Unschedulable), 0))
		}
	}
	return percentiles(ds)
}
