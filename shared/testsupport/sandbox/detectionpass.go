package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/crash"
	"github.com/nodewright/nodewright/shared/testsupport/kubetest"
	"github.com/nodewright/nodewright/shared/testsupport/testenv"
)

// SchedulerComparison is kube-scheduler with detection and without it, over pairs of passes of the same
// pods (ones no NodePool serves, so nothing launches and the scheduler's work is only to fail each pod).
type SchedulerComparison struct {
	// PodsPerSecond is how fast each pass's pods were created: 0 for as fast as 16 writers could, which
	// keeps the control plane's one CPU saturated for the whole pass.
	PodsPerSecond float64 `json:"podsPerSecond"`
	// SchedulerAttemptsPerSecond: kube-scheduler's scheduling attempts (its scheduler_schedule_attempts_total
	// counter) over the time from the first pod's creation to the moment every pod had been tried: medians
	// over the pairs; Ratio is the median of the pairs' ratios.
	SchedulerAttemptsPerSecond SchedulerRates `json:"schedulerAttemptsPerSecond"`
	SchedulerAttemptsRatio     float64        `json:"schedulerAttemptsRatio"`
	// SchedulerStatusWriteMillis is the mean latency of kube-scheduler's PATCH requests in each pass, the
	// pods' status writes its loop waits for (medians over the pairs).
	SchedulerStatusWriteMillis SchedulerRates `json:"schedulerStatusWriteMillis"`
	// CreationToFirstAttemptP99Seconds is, in each pass, the 99th percentile of the time from a pod's
	// creation to kube-scheduler's first verdict on it (its Unschedulable mark): how long pods waited in
	// the scheduler's queue (medians over the pairs).
	CreationToFirstAttemptP99Seconds SchedulerRates   `json:"creationToFirstAttemptP99Seconds"`
	ByPair                           []SchedulerRates `json:"schedulerAttemptsPerSecondByPair"`
	CPUByPair                        []PairCPU        `json:"controlPlaneCPUSecondsByPair"`
}

// compareScheduler runs o.Pairs pairs of scheduler passes whose pods are created podsPerSecond (0: as fast
// as they can be) and sums them up.
func (s *Sandbox) compareScheduler(ctx context.Context, o DetectionOptions, podsPerSecond float64) (SchedulerComparison, error) {
	c := SchedulerComparison{PodsPerSecond: podsPerSecond}
	var without, with, ratios, writesWithout, writesWith, waitWithout, waitWith []float64
	for i := range o.Pairs {
		pair, err := s.schedulerPair(ctx, o, i, podsPerSecond)
		if err != nil {
			return c, err
		}
		rates := SchedulerRates{Without: pair.without.rate, WithDetection: pair.with.rate}
		c.ByPair = append(c.ByPair, rates)
		c.CPUByPair = append(c.CPUByPair, PairCPU{Without: pair.without.cpu, WithDetection: pair.with.cpu})
		without, with = append(without, rates.Without), append(with, rates.WithDetection)
		writesWithout, writesWith = append(writesWithout, pair.without.statusWrite), append(writesWith, pair.with.statusWrite)
		waitWithout, waitWith = append(waitWithout, pair.without.queueWait.P99), append(waitWith, pair.with.queueWait.P99)
		if rates.Without > 0 {
			ratios = append(ratios, rates.WithDetection/rates.Without)
		}
	}
	c.SchedulerAttemptsPerSecond = SchedulerRates{Without: round3(median(without)), WithDetection: round3(median(with))}
	c.SchedulerAttemptsRatio = round3(median(ratios))
	c.SchedulerStatusWriteMillis = SchedulerRates{Without: round3(median(writesWithout)), WithDetection: round3(median(writesWith))}
	c.CreationToFirstAttemptP99Seconds = SchedulerRates{Without: round3(median(waitWithout)), WithDetection: round3(median(waitWith))}
	return c, nil
}

// passPair is one pair's two passes.
type passPair struct{ without, with pass }

// schedulerPair runs pair i of the scheduler passes, without detection and then with it, on pods no
// NodePool serves, created podsPerSecond (0: as fast as they can be), and then waits until the wake-ups
// of the second pass are worked through, so the next pass (or the launch pass) starts from a quiet system.
func (s *Sandbox) schedulerPair(ctx context.Context, o DetectionOptions, i int, podsPerSecond float64) (passPair, error) {
	var out passPair
	if err := s.hook.unregister(ctx, s.Client); err != nil {
		return out, err
	}
	prefix, arrival := "detection", "as fast as 16 writers create them"
	if podsPerSecond > 0 {
		prefix, arrival = "detection-paced", fmt.Sprintf("created %g a second", podsPerSecond)
	}
	s.hook.delay.Store(0)
	s.Timeline.Printf("scenario", "%s pair %d, without: no detection registered; %d pods no NodePool can serve, %s", prefix, i+1, o.Pods, arrival)
	ns := fmt.Sprintf("%s-without-%d", prefix, i+1)
	var err error
	if out.without, err = s.schedulerPass(ctx, ns, o, unserved, podsPerSecond); err != nil {
		return out, err
	}
	out.without.watch.close()
	if err := s.deletePods(ctx, ns, o.Timeout); err != nil {
		return out, err
	}

	s.hook.delay.Store(int64(o.WebhookDelay))
	if err := s.hook.register(ctx, s.Client); err != nil {
		return out, err
	}
	s.Timeline.Printf("scenario", "%s pair %d, with: detection registered, each answer delayed %s; the same %d pods", prefix, i+1, o.WebhookDelay, o.Pods)
	ns = fmt.Sprintf("%s-with-%d", prefix, i+1)
	if out.with, err = s.schedulerPass(ctx, ns, o, unserved, podsPerSecond); err != nil {
		return out, err
	}
	out.with.watch.close()
	if err := s.deletePods(ctx, ns, o.Timeout); err != nil {
		return out, err
	}
	s.awaitProvisioningQueueEmpty(ctx, 2*time.Minute)
	return out, nil
}

// pass is one pass of the detection scenario: its pods' watch, the scheduler's attempt rate and the
// control plane's CPU over the same time.
type pass struct {
	watch       *podWatch
	rate        float64
	statusWrite float64 // kube-scheduler's mean PATCH latency, ms
	cpu         PassCPU
	// queueWait: from each pod's creation to kube-scheduler's first verdict on it.
	queueWait Percentiles
}

// schedulerPass creates o.Pods pods in namespace (16 writers; pod i no sooner than i/podsPerSecond
// seconds in when podsPerSecond is positive) and waits until kube-scheduler has tried every one (each
// marked Unschedulable or bound). The rate is the scheduler's attempts counted from before the first
// creation to the moment every pod had been tried, over that time.
func (s *Sandbox) schedulerPass(ctx context.Context, namespace string, o DetectionOptions, nodeSelector map[string]string, podsPerSecond float64) (pass, error) {
	if _, err := s.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}},
		metav1.CreateOptions{}); err != nil {
		return pass{}, fmt.Errorf("creating namespace %s: %w", namespace, err)
	}
	watch, err := watchPods(ctx, s.Client, namespace, "app=detection")
	if err != nil {
		return pass{}, err
	}
	before, err := s.schedulerCounters(ctx, false)
	if err != nil {
		watch.close()
		return pass{}, err
	}
	cpuBefore, err := s.controlPlaneCPU()
	if err != nil {
		watch.close()
		return pass{}, err
	}
	start := time.Now()
	g, gctx := crash.WithContext(ctx)
	g.SetLimit(16)
	grace := int64(0)
	var createdMu sync.Mutex
	created := make(map[string]time.Time, o.Pods)
	for i := range o.Pods {
		if podsPerSecond > 0 {
			if d := time.Until(start.Add(time.Duration(float64(i) / podsPerSecond * float64(time.Second)))); d > 0 {
				time.Sleep(d)
			}
		}
		g.Go(func() error {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("detection-%04d", i), Labels: map[string]string{"app": "detection"}},
				Spec: corev1.PodSpec{TerminationGracePeriodSeconds: &grace, NodeSelector: nodeSelector,
					Containers: []corev1.Container{{Name: "pause", Image: "public.ecr.aws/eks-distro/kubernetes/pause:3.7",
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
							corev1.ResourceCPU: resource.MustParse(o.CPU), corev1.ResourceMemory: resource.MustParse(o.Memory)}}}}}}
			if _, err := s.Client.CoreV1().Pods(namespace).Create(gctx, pod, metav1.CreateOptions{}); err != nil {
				return err
			}
			createdMu.Lock()
			created[pod.Name] = time.Now()
			createdMu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		watch.close()
		return pass{}, fmt.Errorf("creating the pods in %s: %w", namespace, err)
	}
	deadline := time.Now().Add(o.Timeout)
	for {
		tried := 0
		for _, p := range watch.snapshot() {
			if !p.Unschedulable.IsZero() || !p.Bound.IsZero() {
				tried++
			}
		}
		if tried >= o.Pods {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			watch.close()
			return pass{}, fmt.Errorf("kube-scheduler tried %d of %d pods in %s within %s", tried, o.Pods, namespace, o.Timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
	elapsed := time.Since(start)
	cpuAfter, err := s.controlPlaneCPU()
	if err != nil {
		watch.close()
		return pass{}, err
	}
	after, err := s.schedulerCounters(ctx, true)
	if err != nil {
		watch.close()
		return pass{}, err
	}
	attempts := after.attempts - before.attempts
	rate := round3(attempts / elapsed.Seconds())
	statusWrite := 0.0
	if n := after.patches - before.patches; n > 0 {
		statusWrite = round3((after.patchSeconds - before.patchSeconds) / n * 1000)
	}
	cpu := PassCPU{APIServer: round3(cpuAfter.APIServer - cpuBefore.APIServer), Scheduler: round3(cpuAfter.Scheduler - cpuBefore.Scheduler),
		Etcd: round3(cpuAfter.Etcd - cpuBefore.Etcd), Functions: round3(cpuAfter.Functions - cpuBefore.Functions),
		Moto: round3(cpuAfter.Moto - cpuBefore.Moto), WebhookCalls: cpuAfter.WebhookCalls - cpuBefore.WebhookCalls,
		WebhookConnections: cpuAfter.WebhookConnections - cpuBefore.WebhookConnections}
	queueWait := firstVerdictWait(watch.snapshot(), created) // every create has returned (g.Wait)
	s.Timeline.Printf("scenario", "%s: kube-scheduler made %.0f attempts in %.2fs (%.1f/s), its status writes took %.1f ms on average, a pod waited for its first verdict %.3fs (p50) to %.3fs (p99); CPU: kube-apiserver %.2fs, kube-scheduler %.2fs, etcd %.2fs, functions %.2fs, moto %.2fs; %d webhook calls over %d new connections",
		namespace, attempts, elapsed.Seconds(), rate, statusWrite, queueWait.P50, queueWait.P99, cpu.APIServer, cpu.Scheduler, cpu.Etcd, cpu.Functions, cpu.Moto,
		cpu.WebhookCalls, cpu.WebhookConnections)
	return pass{watch: watch, rate: rate, statusWrite: statusWrite, cpu: cpu, queueWait: queueWait}, nil
}

// firstVerdictWait is, for each pod kube-scheduler has tried, the time from its creation (created, by
// name: when its create was answered) to the scheduler's first verdict, its Unschedulable mark or its
// binding, whichever came first (zero when the watch saw the verdict before the create's answer came).
func firstVerdictWait(pods []podTimes, created map[string]time.Time) Percentiles {
	var ds []time.Duration
	for _, p := range pods {
		at, ok := created[p.Name]
		if !ok {
			continue
		}
		verdict := p.Unschedulable
		if verdict.IsZero() || (!p.Bound.IsZero() && p.Bound.Before(verdict)) {
			verdict = p.Bound
		}
		if !verdict.IsZero() {
			ds = append(ds, max(verdict.Sub(at), 0))
		}
	}
	return percentiles(ds)
}

// controlPlaneCPU reads the CPU time kube-apiserver, kube-scheduler and etcd have used so far, and the
// webhook's requests and connections so far.
func (s *Sandbox) controlPlaneCPU() (PassCPU, error) {
	pids := s.CP.PIDs()
	var out PassCPU
	if s.hook != nil {
		out.WebhookCalls, out.WebhookConnections = s.hook.count(), s.hook.connections()
	}
	pids["functions"] = os.Getpid()
	if s.Moto != nil {
		pids["moto"] = s.Moto.PID()
	}
	for name, into := range map[string]*float64{"kube-apiserver": &out.APIServer, "kube-scheduler": &out.Scheduler, "etcd": &out.Etcd,
		"functions": &out.Functions, "moto": &out.Moto} {
		pid, ok := pids[name]
		if !ok {
			if name == "moto" {
				continue
			}
			return out, fmt.Errorf("%s is not running", name)
		}
		d, err := testenv.CPUTime(pid)
		if err != nil {
			return out, err
		}
		*into = d.Seconds()
	}
	return out, nil
}

// schedulerCounts are kube-scheduler's counters that a pass reads before and after it.
type schedulerCounts struct {
	// attempts is scheduler_schedule_attempts_total, summed over its results.
	attempts float64
	// patches and patchSeconds are the count and total latency of its client's PATCH requests
	// (rest_client_request_duration_seconds): the pods' status writes, which its loop waits for.
	patches, patchSeconds float64
}

// schedulerCounters reads kube-scheduler's counters. The attempts counter has no samples until the
// scheduler's first attempt: that is zero unless made is set (the caller knows attempts were made).
func (s *Sandbox) schedulerCounters(ctx context.Context, made bool) (schedulerCounts, error) {
	var out schedulerCounts
	text, err := s.CP.ComponentMetrics(ctx, "kube-scheduler")
	if err != nil {
		return out, err
	}
	var found bool
	out.attempts, found = kubetest.SumCounter(text, "scheduler_schedule_attempts_total")
	if !found && made {
		return out, errors.New("kube-scheduler's metrics have no scheduler_schedule_attempts_total")
	}
	out.patches, _ = kubetest.SumSamples(text, "rest_client_request_duration_seconds_count", `verb="PATCH"`)
	out.patchSeconds, _ = kubetest.SumSamples(text, "rest_client_request_duration_seconds_sum", `verb="PATCH"`)
	return out, nil
}

// awaitProvisioningQueueEmpty waits, at most timeout, until the provisioning queue holds no message.
func (s *Sandbox) awaitProvisioningQueueEmpty(ctx context.Context, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) && ctx.Err() == nil && !s.provisioningQueueEmpty(ctx) {
		time.Sleep(250 * time.Millisecond)
	}
}
