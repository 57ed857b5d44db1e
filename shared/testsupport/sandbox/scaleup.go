package sandbox

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ScaleUpOptions shape the scale-up scenario.
type ScaleUpOptions struct {
	// Replicas the inflate deployment scales to (default 30); CPU and Memory each replica requests
	// (default 1 and 1.5Gi).
	Replicas    int32
	CPU, Memory string
	// Namespace (default "default") and Timeout for every pod to be bound (default 3 minutes).
	Namespace string
	Timeout   time.Duration
}

func (o *ScaleUpOptions) defaults() {
	if o.Replicas <= 0 {
		o.Replicas = 30
	}
	if o.CPU == "" {
		o.CPU = "1"
	}
	if o.Memory == "" {
		o.Memory = "1536Mi"
	}
	if o.Namespace == "" {
		o.Namespace = "default"
	}
	if o.Timeout <= 0 {
		o.Timeout = 3 * time.Minute
	}
}

// ScaleUpReport is the scale-up scenario's outcome.
type ScaleUpReport struct {
	Scenario      string `json:"scenario"`
	PodsRequested int    `json:"podsRequested"`
	PodsBound     int    `json:"podsBound"`
	PodsRunning   int    `json:"podsRunning"`
	Capacity
	// PendingToLaunchSeconds: from the moment a pod was marked Unschedulable to the CreateFleet call for
	// the node it was bound to. PendingToBoundSeconds: to its binding.
	PendingToLaunchSeconds Percentiles `json:"pendingToLaunchSeconds"`
	PendingToBoundSeconds  Percentiles `json:"pendingToBoundSeconds"`
	// WebhookHandlerSeconds: the pending-pod webhook's handler time per request.
	WebhookHandlerSeconds Percentiles `json:"webhookHandlerSeconds"`
	WebhookRequests       int         `json:"webhookRequests"`
	// ProvisionerInvocations, Solves and CoalescedTriggers count the provisioner's work.
	ProvisionerInvocations int `json:"provisionerInvocations"`
	Solves                 int `json:"solves"`
	CoalescedTriggers      int `json:"coalescedTriggers"`
	// Claims counts the live claims at the end; MirrorsMatchingClaims their NodeClaim mirrors
	// (nodeclaims.nodewright.sh) whose node, phase and conditions match the claim (MirrorMismatches says
	// how the others differ); MirrorLagSeconds is, for every step a claim took (created, launched,
	// registered, initialized), the time from the claim's record of it to its mirror first showing it.
	Claims                int         `json:"claims"`
	MirrorsMatchingClaims int         `json:"mirrorsMatchingClaims"`
	MirrorMismatches      []string    `json:"mirrorMismatches,omitempty"`
	MirrorLagSeconds      Percentiles `json:"mirrorLagSeconds"`
	// BrokenNodeClass is what kubectl shows of the scenario's EC2NodeClass whose subnet does not exist
	// and of its NodePool (BrokenClassName), read back from the API server at the end; nil when the
	// scenario ran as another scenario's set-up, without them.
	BrokenNodeClass *BrokenNodeClass `json:"brokenNodeClass,omitempty"`
	NodeBootSeconds float64          `json:"nodeBootSeconds"`
	DurationSeconds float64          `json:"durationSeconds"`
	Errors          []string         `json:"errors,omitempty"`
	// Targets: pending→launch p50 ≤ 1.5 s, webhook p99 ≤ 50 ms, every pod bound, nothing leaked, every
	// claim's mirror matching it, mirror lag p99 ≤ 10 s; with BrokenNodeClass, that it shows as
	// BrokenNodeClass.Met says.
	TargetsMet map[string]bool `json:"targetsMet"`
}

// ScaleUp runs the scale-up scenario: an inflate deployment goes from 0 to Replicas; Nodewright launches
// nodes for the pods kube-scheduler cannot place, the nodes join and the pods bind. Beside the default
// NodePool, the scenario configures a NodePool whose EC2NodeClass selects a subnet that does not exist
// (BrokenClassName; no pod of the scenario can use it) and runs the disruption function's NodePool and
// EC2NodeClass mirror pass (configMirrorPass), so that kubectl shows the class's Ready False and the
// NodePool's NodeClassNotReady Event (the report's brokenNodeClass).
func (s *Sandbox) ScaleUp(ctx context.Context, o ScaleUpOptions) (ScaleUpReport, error) {
	return s.scaleUp(ctx, o, true)
}

// scaleUpSetup is the scale-up scenario as other scenarios' set-up: the default NodePool alone, without
// the class with a missing subnet nor the mirror pass, so their own figures stay those of their flows.
func (s *Sandbox) scaleUpSetup(ctx context.Context, o ScaleUpOptions) (ScaleUpReport, error) {
	return s.scaleUp(ctx, o, false)
}

func (s *Sandbox) scaleUp(ctx context.Context, o ScaleUpOptions, brokenClass bool) (ScaleUpReport, error) {
	o.defaults()
	rep := ScaleUpReport{Scenario: "scale-up", PodsRequested: int(o.Replicas), NodeBootSeconds: s.opts.BootDelay.Seconds()}
	if brokenClass {
		stop, err := s.configureBrokenClass(ctx)
		if err != nil {
			return rep, err
		}
		defer stop()
		rep.BrokenNodeClass = &BrokenNodeClass{Name: BrokenClassName}
	}
	deploy := inflate(o)
	if _, err := s.Client.AppsV1().Deployments(o.Namespace).Create(ctx, deploy, metav1.CreateOptions{}); err != nil {
		return rep, fmt.Errorf("creating the inflate deployment: %w", err)
	}
	watch, err := watchPods(ctx, s.Client, o.Namespace, "app=inflate")
	if err != nil {
		return rep, err
	}
	defer watch.close()
	mirrors, err := s.watchMirrors(ctx)
	if err != nil {
		return rep, fmt.Errorf("watching the NodeClaim mirrors: %w", err)
	}
	defer mirrors.close()
	before := s.Stats()
	errsBefore := len(s.Errors())
	webhookBefore := len(s.WebhookLatencies())

	s.Timeline.Restart()
	start := time.Now()
	patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, o.Replicas)
	if _, err := s.Client.AppsV1().Deployments(o.Namespace).Patch(ctx, "inflate", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		return rep, fmt.Errorf("scaling inflate: %w", err)
	}
	s.Timeline.Printf("scenario", "scaled deployment inflate from 0 to %d replicas (%s CPU, %s each)", o.Replicas, o.CPU, o.Memory)

	deadline := time.Now().Add(o.Timeout)
	last := ""
	for {
		pods := watch.snapshot()
		unsched, bound, running := 0, 0, 0
		for _, p := range pods {
			if !p.Deleted.IsZero() {
				continue
			}
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
		line := fmt.Sprintf("%d/%d pods bound, %d running, %d waiting as Unschedulable, %d CreateFleet calls", bound, o.Replicas, running, unsched, len(s.Launches()))
		if line != last {
			s.Timeline.Printf("progress", "%s", line)
			last = line
		}
		if running >= int(o.Replicas) {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			s.Timeline.Printf("scenario", "gave up waiting after %s", o.Timeout)
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	rep.DurationSeconds = time.Since(start).Seconds()
	s.settle(ctx)
	return s.finishScaleUp(ctx, rep, watch.snapshot(), mirrors, before, errsBefore, webhookBefore)
}

// settle waits (a bounded while) until no claim is still joining, so the leak check reads a quiet system.
// Under faults (the chaos scenario) it also waits for the provisioning queue to empty, so the next step
// starts from a steady state: the provisioner can still be working through the webhook's messages of a
// burst, and the queue is FIFO.
func (s *Sandbox) settle(ctx context.Context) {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		claims, err := s.Store.ListClaims(ctx)
		if err != nil {
			return
		}
		joining := 0
		for _, c := range claims {
			if c.Lifecycle.Live() && c.InitializedAt == nil {
				joining++
			}
		}
		if joining == 0 && (!s.faultsArmed() || s.provisioningQueueEmpty(ctx)) {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// provisioningQueueEmpty reports whether the provisioning queue holds no message, visible or in flight.
func (s *Sandbox) provisioningQueueEmpty(ctx context.Context) bool {
	out, err := s.SQS.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(s.Queues.Provisioning),
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages,
			sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible}})
	if err != nil {
		return true // nothing to wait for that can be seen
	}
	return out.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessages)] == "0" &&
		out.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible)] == "0"
}

func (s *Sandbox) finishScaleUp(ctx context.Context, rep ScaleUpReport, pods []podTimes, mirrors *mirrorWatch, before Stats, errsBefore, webhookBefore int) (ScaleUpReport, error) {
	var toBound []time.Duration
	for _, p := range pods {
		if !p.Deleted.IsZero() {
			continue
		}
		if !p.Bound.IsZero() {
			rep.PodsBound++
		}
		if !p.Running.IsZero() {
			rep.PodsRunning++
		}
		if p.Unschedulable.IsZero() || p.Bound.IsZero() {
			continue
		}
		toBound = append(toBound, p.Bound.Sub(p.Unschedulable))
	}
	rep.PendingToBoundSeconds = percentiles(toBound)
	var err error
	if rep.PendingToLaunchSeconds, err = s.pendingToLaunch(ctx, pods); err != nil {
		return rep, err
	}
	hooks := s.WebhookLatencies()[webhookBefore:]
	rep.WebhookHandlerSeconds, rep.WebhookRequests = percentiles(hooks), len(hooks)
	after := s.Stats()
	rep.ProvisionerInvocations = after.ProvisionerInvocations - before.ProvisionerInvocations
	rep.Solves = after.Solves - before.Solves
	rep.CoalescedTriggers = after.Coalesced - before.Coalesced
	if rep.Capacity, err = s.capacity(ctx); err != nil {
		return rep, err
	}
	chk, err := s.checkMirrors(ctx, mirrors, mirrorSettle)
	if err != nil {
		return rep, err
	}
	rep.Claims, rep.MirrorsMatchingClaims, rep.MirrorMismatches, rep.MirrorLagSeconds = chk.Claims, chk.Matching, chk.Mismatches, chk.Lag
	s.printNodeClaimView(ctx)
	if rep.BrokenNodeClass != nil {
		b, err := s.awaitBrokenNodeClass(ctx, rep.BrokenNodeClass.Name)
		if err != nil {
			return rep, err
		}
		rep.BrokenNodeClass = &b
	}
	for _, e := range s.Errors()[errsBefore:] {
		rep.Errors = append(rep.Errors, e.Error())
	}
	rep.TargetsMet = map[string]bool{
		"mirrorsMatchingClaims==claims": rep.Claims > 0 && rep.MirrorsMatchingClaims == rep.Claims,
		mirrorLagTarget:                 mirrorLagMet(rep.MirrorLagSeconds),
		"pendingToLaunchP50<=1.5s":      rep.PendingToLaunchSeconds.N > 0 && rep.PendingToLaunchSeconds.P50 <= 1.5,
		"webhookP99<=50ms":              rep.WebhookHandlerSeconds.N > 0 && rep.WebhookHandlerSeconds.P99 <= 0.05,
		"everyPodBound":                 rep.PodsBound == rep.PodsRequested,
		"noLeakedInstances":             rep.LeakedInstances == 0 && len(rep.Leaks) == 0,
	}
	if rep.BrokenNodeClass != nil {
		rep.TargetsMet["brokenNodeClassShowsNotReady"] = rep.BrokenNodeClass.Met()
	}
	types := make([]string, 0, len(rep.InstanceTypes))
	for t, n := range rep.InstanceTypes {
		types = append(types, fmt.Sprintf("%d× %s", n, t))
	}
	sort.Strings(types)
	s.Timeline.Printf("scenario", "done: %d/%d pods bound on %d nodes (%s), $%.4f/h; pending→launch p50 %.3fs p99 %.3fs; pending→bound p50 %.3fs p99 %.3fs; %d solves, %d triggers coalesced; leaked %d",
		rep.PodsBound, rep.PodsRequested, rep.Nodes, strings.Join(types, ", "), rep.TotalPricePerHour,
		rep.PendingToLaunchSeconds.P50, rep.PendingToLaunchSeconds.P99, rep.PendingToBoundSeconds.P50, rep.PendingToBoundSeconds.P99,
		rep.Solves, rep.CoalescedTriggers, rep.LeakedInstances)
	return rep, nil
}

// mirrorSettle bounds the wait at the end for the mirrors to match the claims: the pass that initializes
// the last claim writes its mirror at its end. The lag is measured apart (mirrorLagSeconds).
const mirrorSettle = 10 * time.Second

// pendingToLaunch is, for each pod marked Unschedulable and then bound, the time from its mark to the
// CreateFleet call of the first claim that covered it: the claim a provisioner run launched for it, or
// the claim in flight the run that first saw it pending placed it on (zero when that claim was launched
// before the mark). A later run may pack a pending pod into a newer claim once other pods took its room,
// and kube-scheduler may bind it to yet another node (pendingToBoundNodeLaunchSeconds counts that one).
// A pod no run covered counts the CreateFleet of the node it was bound to.
func (s *Sandbox) pendingToLaunch(ctx context.Context, pods []podTimes) (Percentiles, error) {
	planned, _, err := s.launchLatencies(ctx, pods)
	return planned, err
}

// launchLatencies is pendingToLaunch (planned) and the same from each pod's mark to the CreateFleet of
// the node kube-scheduler bound it to (boundNode), which may be a later node launched for other pods.
func (s *Sandbox) launchLatencies(ctx context.Context, pods []podTimes) (planned, boundNode Percentiles, err error) {
	launchAt := map[string]time.Time{} // instance id → CreateFleet call
	for _, l := range s.Launches() {
		for _, id := range l.InstanceIDs {
			launchAt[id] = l.At
		}
	}
	nodeInstance := map[string]string{}
	nodes, err := s.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return Percentiles{}, Percentiles{}, err
	}
	for _, n := range nodes.Items {
		if i := strings.LastIndex(n.Spec.ProviderID, "/"); i >= 0 {
			nodeInstance[n.Name] = n.Spec.ProviderID[i+1:]
		}
	}
	var toPlanned, toBound []time.Duration
	for _, p := range pods {
		if !p.Deleted.IsZero() || p.Unschedulable.IsZero() || p.Bound.IsZero() {
			continue
		}
		at, bound := launchAt[nodeInstance[p.Node]]
		if bound {
			toBound = append(toBound, max(at.Sub(p.Unschedulable), 0))
		}
		if planned, ok := launchAt[s.coveringInstanceFor(p.UID)]; ok {
			at, bound = planned, true
		}
		if bound {
			toPlanned = append(toPlanned, max(at.Sub(p.Unschedulable), 0))
		}
	}
	return percentiles(toPlanned), percentiles(toBound), nil
}

// inflate is Karpenter's classic demo workload: pause containers that only request resources.
func inflate(o ScaleUpOptions) *appsv1.Deployment {
	return pauseDeployment("inflate", o.Namespace, 0, o.CPU, o.Memory, nil)
}

// pauseDeployment is a deployment of pause containers labelled app=name that request cpu and memory and
// select nodes by nodeSelector.
func pauseDeployment(name, namespace string, replicas int32, cpu, memory string, nodeSelector map[string]string) *appsv1.Deployment {
	grace := int64(0)
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				TerminationGracePeriodSeconds: &grace, NodeSelector: nodeSelector,
				Containers: []corev1.Container{{Name: name, Image: "public.ecr.aws/eks-distro/kubernetes/pause:3.7",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}}}}}},
		},
	}
}
