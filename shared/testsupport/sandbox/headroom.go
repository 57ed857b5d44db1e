package sandbox

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/settings"
	"github.com/nodewright/nodewright/shared/flows/provisioning"
)

// HeadroomOptions shape the headroom scenario.
type HeadroomOptions struct {
	// BufferSize is the CapacityBuffer's replicas and the size of the scale-up that takes its room
	// (default DefaultHeadroomBufferSize); CPU and Memory each chunk's and each inflate pod's requests
	// (default 1 and 1.5Gi).
	BufferSize  int32
	CPU, Memory string
	// StaticReplicas is the static NodePool's spec.replicas (default 2).
	StaticReplicas int64
	// Namespace (default "default"); Timeout bounds each wait (default 3 minutes).
	Namespace string
	Timeout   time.Duration
}

// DefaultHeadroomBufferSize is the buffer's chunks (and the scale-up's pods) when none is given.
const DefaultHeadroomBufferSize = 10

// HeadroomBackstopEvery is the provisioner's backstop schedule the headroom scenario runs with
// (deployed: every minute). Nothing goes pending while the buffer's room is filled or refilled, nor
// while the static pool is restored, so backstop runs do that work; the sandbox runs them faster, as it
// runs the disruption function's schedule faster in the consolidation scenarios.
const HeadroomBackstopEvery = 10 * time.Second

// HeadroomStaticPool is the headroom scenario's static NodePool.
const HeadroomStaticPool = "fixed"

func (o *HeadroomOptions) defaults() {
	if o.BufferSize <= 0 {
		o.BufferSize = DefaultHeadroomBufferSize
	}
	if o.CPU == "" {
		o.CPU = "1"
	}
	if o.Memory == "" {
		o.Memory = "1536Mi"
	}
	if o.StaticReplicas <= 0 {
		o.StaticReplicas = 2
	}
	if o.Namespace == "" {
		o.Namespace = "default"
	}
	if o.Timeout <= 0 {
		o.Timeout = 3 * time.Minute
	}
}

// headroomStaticPoolConfig is a static NodePool of replicas 2-vCPU on-demand nodes, tainted so that
// neither the buffer's virtual pods nor inflate land there (a dedicated pool), with room for one node
// more than replicas in limits.nodes; and the sample EC2NodeClass it uses.
func headroomStaticPoolConfig(replicas int64) string {
	return fmt.Sprintf(`apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: %s
spec:
  replicas: %d
  limits:
    nodes: "%d"
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      taints:
        - {key: example.com/dedicated, value: %s, effect: NoSchedule}
      requirements:
        - {key: kubernetes.io/arch, operator: In, values: ["amd64"]}
        - {key: karpenter.k8s.aws/instance-category, operator: In, values: ["m"]}
        - {key: karpenter.k8s.aws/instance-cpu, operator: In, values: ["2"]}
        - {key: karpenter.sh/capacity-type, operator: In, values: ["on-demand"]}
---
`, HeadroomStaticPool, replicas, replicas+1, HeadroomStaticPool) + SampleNodeClass
}

// Headroom runs the headroom scenario with the CapacityBuffer and StaticCapacity gates on. A
// CapacityBuffer of BufferSize chunks (a PodTemplate of inflate's shape) and a static NodePool of
// StaticReplicas nodes are created; backstop runs launch the buffer's room and the pool's nodes. Once
// the room is on joined Nodes, inflate scales from 0 to BufferSize: kube-scheduler binds every pod to
// that room, with no launch for them; the next backstop run launches room for the buffer again. Then
// one of the static pool's Nodes is deleted and its instance terminated, as a user or an Auto Scaling
// group would, and the pool goes back to its replicas.
func (s *Sandbox) Headroom(ctx context.Context, o HeadroomOptions) (HeadroomReport, error) {
	o.defaults()
	rep := HeadroomReport{Scenario: "headroom", BufferSize: int(o.BufferSize), BufferChunk: o.CPU + " CPU, " + o.Memory,
		ScaleUpPods: int(o.BufferSize), StaticPool: HeadroomStaticPool, StaticPoolReplicas: o.StaticReplicas,
		BackstopEverySeconds: s.opts.BackstopEvery.Seconds(), ScaleUpBoundAfterSeconds: -1, BufferRefilledAfterSeconds: -1,
		StaticReplacementLaunchedAfterSeconds: -1, StaticRestoredAfterSeconds: -1}
	errsBefore := len(s.Errors())
	s.Timeline.Restart()
	start := time.Now()
	if err := s.setUpHeadroom(ctx, o); err != nil {
		return rep, err
	}
	watch, err := watchPods(ctx, s.Client, o.Namespace, "app=inflate")
	if err != nil {
		return rep, err
	}
	defer watch.close()

	// 1. The buffer's room and the static pool's nodes are launched and join.
	if err := s.awaitHeadroom(ctx, o, start, &rep); err != nil {
		return rep, err
	}
	// 2. A scale-up of the buffer's size takes the room.
	scaleUp, bound, err := s.scaleUpIntoRoom(ctx, o, watch, &rep)
	if err != nil {
		return rep, err
	}
	// 3. The buffer is refilled.
	if err := s.awaitRefill(ctx, o, scaleUp, bound, &rep); err != nil {
		return rep, err
	}
	// 4. The static pool holds its count through a node deletion.
	if err := s.deleteStaticNode(ctx, o, &rep); err != nil {
		return rep, err
	}
	return s.finishHeadroom(ctx, o, rep, watch, start, errsBefore)
}

// setUpHeadroom turns the two gates on (the deployment's settings, as the CDK context value
// featureGates stores them), applies the static NodePool (as nodewright apply does), installs the
// CapacityBuffer CRD (nodewright manifests --capacity-buffer-crd) and creates inflate at 0 replicas,
// the buffer's PodTemplate and the buffer.
func (s *Sandbox) setUpHeadroom(ctx context.Context, o HeadroomOptions) error {
	set := settings.Default()
	set.FeatureGates.CapacityBuffer, set.FeatureGates.StaticCapacity = true, true
	item, err := state.SettingsItem(set)
	if err != nil {
		return err
	}
	if _, err := s.Store.PutConfig(ctx, item); err != nil {
		return fmt.Errorf("storing the feature gates: %w", err)
	}
	if err := applyConfig(ctx, s.Store, headroomStaticPoolConfig(o.StaticReplicas)); err != nil {
		return fmt.Errorf("applying the static NodePool: %w", err)
	}
	s.Timeline.Printf("scenario", "feature gates CapacityBuffer and StaticCapacity on; static NodePool %s (replicas %d, tainted example.com/dedicated) applied",
		HeadroomStaticPool, o.StaticReplicas)
	if err := s.installCapacityBufferCRD(ctx, o.Namespace); err != nil {
		return err
	}
	if _, err := s.Client.AppsV1().Deployments(o.Namespace).Create(ctx, inflate(ScaleUpOptions{Namespace: o.Namespace, CPU: o.CPU, Memory: o.Memory}),
		metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating the inflate deployment: %w", err)
	}
	chunk := pauseDeployment("inflate-chunk", o.Namespace, 0, o.CPU, o.Memory, nil).Spec.Template
	if _, err := s.Client.CoreV1().PodTemplates(o.Namespace).Create(ctx, &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Name: "inflate-chunk"},
		Template: chunk}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating the buffer's PodTemplate: %w", err)
	}
	if err := s.createCapacityBuffer(ctx, o.Namespace, "inflate", "inflate-chunk", o.BufferSize); err != nil {
		return err
	}
	s.Timeline.Printf("scenario", "CapacityBuffer %s/inflate: room for %d chunks of %s CPU, %s (PodTemplate inflate-chunk)",
		o.Namespace, o.BufferSize, o.CPU, o.Memory)
	return nil
}

// awaitHeadroom waits until the buffer's room is on joined Nodes (Provisioning True, no claim joining)
// and the static pool has its replicas, all initialized.
func (s *Sandbox) awaitHeadroom(ctx context.Context, o HeadroomOptions, start time.Time, rep *HeadroomReport) error {
	deadline := time.Now().Add(o.Timeout)
	last := ""
	for {
		cond, err := s.bufferProvisioning(ctx, o.Namespace, "inflate")
		if err != nil {
			return err
		}
		claims, err := s.Store.ListClaims(ctx)
		if err != nil {
			return err
		}
		count, joining := provisioning.CountStatic(claims, HeadroomStaticPool), joiningClaims(claims)
		line := fmt.Sprintf("buffer Provisioning %s; static pool %d/%d; %d claims joining", orNoneYet(cond), count.Active, o.StaticReplicas, joining)
		if line != last {
			s.Timeline.Printf("progress", "%s", line)
			last = line
		}
		if cond == fitsExisting && joining == 0 && count.Active == o.StaticReplicas && count.Deleting == 0 {
			rep.BufferConditionBeforeScaleUp, rep.StaticPoolNodesBefore = cond, count.Active
			rep.BufferRoomReadyAfterSeconds = round3(time.Since(start).Seconds())
			rep.BufferRoomLaunches = classifyLaunches(s.Launches(), start, time.Time{}, s.launchedClaimsByInstance(), HeadroomStaticPool).Refill
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("the buffer's room and the static pool were not ready within %s: %s", o.Timeout, line)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// scaleUpIntoRoom scales inflate from 0 to the buffer's size and waits until every pod is bound; it
// returns when the scale-up started and when its last pod was bound (zero: not all bound).
func (s *Sandbox) scaleUpIntoRoom(ctx context.Context, o HeadroomOptions, watch *podWatch, rep *HeadroomReport) (time.Time, time.Time, error) {
	nodes, err := s.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return time.Time{}, time.Time{}, err
	}
	prior := map[string]bool{}
	for _, n := range nodes.Items {
		prior[n.Name] = true
	}
	start := time.Now()
	patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, o.BufferSize)
	if _, err := s.Client.AppsV1().Deployments(o.Namespace).Patch(ctx, "inflate", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		return start, time.Time{}, fmt.Errorf("scaling inflate: %w", err)
	}
	s.Timeline.Printf("scenario", "scaled deployment inflate from 0 to %d replicas, the buffer's size (%d Nodes exist)", o.BufferSize, len(prior))
	deadline := start.Add(o.Timeout)
	var bound time.Time
	for bound.IsZero() {
		pods := watch.snapshot()
		n, lastBound := 0, time.Time{}
		for _, p := range pods {
			if p.Deleted.IsZero() && !p.Bound.IsZero() {
				n++
				if p.Bound.After(lastBound) {
					lastBound = p.Bound
				}
			}
		}
		if n >= int(o.BufferSize) {
			bound = lastBound
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			s.Timeline.Printf("scenario", "gave up waiting for the scale-up to bind after %s (%d/%d bound)", o.Timeout, n, o.BufferSize)
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	pods := watch.snapshot()
	rep.BufferedPodsBoundWithoutLaunch = boundOnPriorNodes(pods, prior)
	for _, p := range pods {
		if !p.Unschedulable.IsZero() {
			rep.PodsMarkedUnschedulable++
		}
	}
	if !bound.IsZero() {
		rep.ScaleUpBoundAfterSeconds = round3(bound.Sub(start).Seconds())
		kinds := classifyLaunches(s.Launches(), start, bound, s.launchedClaimsByInstance(), HeadroomStaticPool)
		rep.LaunchesDuringScaleUp, rep.RefillLaunchesDuringScaleUp = kinds.Other+kinds.Static, kinds.Refill
	}
	s.Timeline.Printf("scenario", "%d/%d pods of the scale-up bound on Nodes that existed before it, in %.3fs; %d launches meanwhile (%d the buffer's refill)",
		rep.BufferedPodsBoundWithoutLaunch, o.BufferSize, rep.ScaleUpBoundAfterSeconds, rep.LaunchesDuringScaleUp+rep.RefillLaunchesDuringScaleUp,
		rep.RefillLaunchesDuringScaleUp)
	return start, bound, nil
}

// awaitRefill waits until a run launched room for the buffer again and that room joined (Provisioning
// True, no claim joining).
func (s *Sandbox) awaitRefill(ctx context.Context, o HeadroomOptions, scaleUp, bound time.Time, rep *HeadroomReport) error {
	from := bound
	if from.IsZero() {
		from = scaleUp
	}
	deadline := time.Now().Add(o.Timeout)
	last := ""
	for {
		claims := s.launchedClaimsByInstance()
		refills := classifyLaunches(s.Launches(), scaleUp, time.Time{}, claims, HeadroomStaticPool).Refill
		cond, err := s.bufferProvisioning(ctx, o.Namespace, "inflate")
		if err != nil {
			return err
		}
		all, err := s.Store.ListClaims(ctx)
		if err != nil {
			return err
		}
		joining := joiningClaims(all)
		line := fmt.Sprintf("buffer refill launches %d; buffer Provisioning %s; %d claims joining", refills, orNoneYet(cond), joining)
		if line != last {
			s.Timeline.Printf("progress", "%s", line)
			last = line
		}
		if refills > 0 && cond == fitsExisting && joining == 0 {
			rep.BufferRefillLaunches, rep.BufferConditionAfterRefill = refills, cond
			if at := firstLaunchAfter(s.Launches(), scaleUp, claims, HeadroomStaticPool, true); !at.IsZero() {
				rep.BufferRefilledAfterSeconds = round3(max(at.Sub(from), 0).Seconds())
			}
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			s.Timeline.Printf("scenario", "gave up waiting for the buffer's refill after %s: %s", o.Timeout, line)
			rep.BufferRefillLaunches, rep.BufferConditionAfterRefill = refills, cond
			return nil
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// deleteStaticNode deletes one of the static pool's Nodes (kubectl delete node) and terminates its
// instance, then waits until the pool is back at its replicas: as many Active claims, all initialized,
// none deleting.
func (s *Sandbox) deleteStaticNode(ctx context.Context, o HeadroomOptions, rep *HeadroomReport) error {
	claims, err := s.Store.ListClaims(ctx)
	if err != nil {
		return err
	}
	var victim state.Claim
	for _, c := range claims {
		if c.NodePool == HeadroomStaticPool && c.Lifecycle == state.Initialized && c.NodeName != "" {
			victim = c
			break
		}
	}
	if victim.Name == "" {
		return fmt.Errorf("static NodePool %s has no initialized node to delete", HeadroomStaticPool)
	}
	rep.StaticDeletedNode, rep.StaticDeletedInstance = victim.NodeName, victim.InstanceID
	start := time.Now()
	if err := s.Client.CoreV1().Nodes().Delete(ctx, victim.NodeName, metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("kubectl delete node %s: %w", victim.NodeName, err)
	}
	if _, err := s.EC2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{victim.InstanceID}}); err != nil {
		return fmt.Errorf("terminating instance %s: %w", victim.InstanceID, err)
	}
	s.Timeline.Printf("scenario", "static pool %s: Node %s deleted and its instance %s terminated, as a user or an Auto Scaling group would",
		HeadroomStaticPool, victim.NodeName, victim.InstanceID)
	rep.StaticPoolLowestNodes = o.StaticReplicas
	deadline := start.Add(o.Timeout)
	last := ""
	for {
		claims, err := s.Store.ListClaims(ctx)
		if err != nil {
			return err
		}
		count := provisioning.CountStatic(claims, HeadroomStaticPool)
		rep.StaticPoolLowestNodes = min(rep.StaticPoolLowestNodes, count.Active)
		if rep.StaticReplacementLaunchedAfterSeconds < 0 {
			if at := firstLaunchAfter(s.Launches(), start, nil, HeadroomStaticPool, false); !at.IsZero() {
				rep.StaticReplacementLaunchedAfterSeconds = round3(at.Sub(start).Seconds())
			}
		}
		initialized := staticInitialized(claims, HeadroomStaticPool)
		line := fmt.Sprintf("static pool %s: %d active (%d initialized), %d deleting of %d replicas", HeadroomStaticPool,
			count.Active, initialized, count.Deleting, o.StaticReplicas)
		if line != last {
			s.Timeline.Printf("progress", "%s", line)
			last = line
		}
		rep.StaticPoolNodesAfterDeletion = count.Active
		if count.Active == o.StaticReplicas && count.Deleting == 0 && initialized == count.Active && rep.StaticReplacementLaunchedAfterSeconds >= 0 {
			rep.StaticRestoredAfterSeconds = round3(time.Since(start).Seconds())
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			s.Timeline.Printf("scenario", "gave up waiting for the static pool after %s: %s", o.Timeout, line)
			return nil
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// finishHeadroom counts the scale-up's pods, the leaks and the errors, and sets the targets.
func (s *Sandbox) finishHeadroom(ctx context.Context, o HeadroomOptions, rep HeadroomReport, watch *podWatch, start time.Time, errsBefore int) (HeadroomReport, error) {
	running, _, err := s.inflatePods(ctx, o.Namespace)
	if err != nil {
		return rep, err
	}
	rep.PodsRunning, rep.PodsLost = running, max(int(o.BufferSize)-running, 0)
	uids := map[types.UID]bool{}
	for _, p := range watch.snapshot() {
		uids[p.UID] = true
	}
	for uid := range uids {
		if s.launchedInstanceFor(uid) != "" {
			rep.LaunchesForScaleUpPods++
		}
	}
	s.settle(ctx)
	capacity, err := s.capacity(ctx)
	if err != nil {
		return rep, err
	}
	rep.LeakedInstances, rep.Leaks = capacity.LeakedInstances, capacity.Leaks
	for _, e := range s.Errors()[errsBefore:] {
		rep.Errors = append(rep.Errors, e.Error())
	}
	rep.DurationSeconds = round3(time.Since(start).Seconds())
	rep.setTargets()
	s.Timeline.Printf("scenario", "done: %d/%d pods bound without a launch; refill launches %d; static pool %d/%d after the deletion; pods lost %d; leaked %d",
		rep.BufferedPodsBoundWithoutLaunch, rep.ScaleUpPods, rep.BufferRefillLaunches, rep.StaticPoolNodesAfterDeletion, rep.StaticPoolReplicas,
		rep.PodsLost, rep.LeakedInstances)
	return rep, nil
}

// joiningClaims counts live claims not yet initialized.
func joiningClaims(claims []state.Claim) int {
	n := 0
	for _, c := range claims {
		if c.Lifecycle.Live() && c.InitializedAt == nil {
			n++
		}
	}
	return n
}

// staticInitialized counts pool's initialized claims that are not on their way out.
func staticInitialized(claims []state.Claim, pool string) int64 {
	var n int64
	for _, c := range claims {
		if c.NodePool == pool && c.Lifecycle == state.Initialized && c.TerminationSentAt == nil && c.NodeLostAt == nil {
			n++
		}
	}
	return n
}

func orNoneYet(s string) string {
	if s == "" {
		return "(none yet)"
	}
	return s
}
