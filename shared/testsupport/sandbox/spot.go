package sandbox

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/flows/interruption"
)

// SpotNotice is how long a spot interruption warning gives before EC2 reclaims the instance.
const SpotNotice = 2 * time.Minute

// SpotInterruptionReport is the spot-interruption scenario's outcome.
type SpotInterruptionReport struct {
	Scenario string `json:"scenario"`
	// Setup is the scale-up that put pods on spot nodes first.
	Setup                 ScaleUpReport `json:"setup"`
	InterruptedInstance   string        `json:"interruptedInstance"`
	InterruptedNode       string        `json:"interruptedNode"`
	InterruptedType       string        `json:"interruptedInstanceType"`
	PodsOnInterruptedNode int           `json:"podsOnInterruptedNode"`
	// EventsDelivered: the same warning is published twice (at-least-once delivery).
	EventsDelivered int `json:"eventsDelivered"`
	// ReplacementLaunchedAfterSeconds: from the first warning to the replacement's CreateFleet (-1: none).
	ReplacementLaunchedAfterSeconds float64 `json:"replacementLaunchedAfterSeconds"`
	// InterruptedNodeGoneAfterSeconds: from the first warning to the Node's deletion (-1: still there).
	InterruptedNodeGoneAfterSeconds float64 `json:"interruptedNodeGoneAfterSeconds"`
	// ReclaimedByEC2 is true when the instance was still running at the end of the notice and the
	// sandbox terminated it, as EC2 would.
	ReclaimedByEC2 bool `json:"reclaimedByEC2"`
	// PodsOnNodeAtReplacement: pods still running on the interrupted node when the replacement was
	// launched (replacement first: all of them).
	PodsOnNodeAtReplacement int `json:"podsOnNodeAtReplacement"`
	PodsRescheduled         int `json:"podsRescheduled"`
	PodsLost                int `json:"podsLost"`
	DuplicateEventsActedOn  int `json:"duplicateEventsActedOn"`
	Capacity
	DurationSeconds float64         `json:"durationSeconds"`
	Errors          []string        `json:"errors,omitempty"`
	TargetsMet      map[string]bool `json:"targetsMet"`
}

// SpotInterruption runs the spot-interruption scenario: pods run on spot nodes; one node's instance gets
// a real-shaped interruption warning through EventBridge → SQS, delivered twice; Nodewright launches
// the replacement, drains and removes the node before the two minutes are up; the pods move.
func (s *Sandbox) SpotInterruption(ctx context.Context, o ScaleUpOptions) (SpotInterruptionReport, error) {
	o.defaults()
	rep := SpotInterruptionReport{Scenario: "spot-interruption", EventsDelivered: 2, ReplacementLaunchedAfterSeconds: -1, InterruptedNodeGoneAfterSeconds: -1}
	setup, err := s.scaleUpSetup(ctx, o)
	rep.Setup = setup
	if err != nil {
		return rep, err
	}
	if setup.PodsRunning < setup.PodsRequested {
		return rep, fmt.Errorf("setup: only %d of %d pods running", setup.PodsRunning, setup.PodsRequested)
	}
	victim, pods, err := s.busiestClaim(ctx, o.Namespace, "spot")
	if err != nil {
		return rep, err
	}
	rep.InterruptedInstance, rep.InterruptedNode, rep.InterruptedType, rep.PodsOnInterruptedNode = victim.InstanceID, victim.NodeName, victim.InstanceType, pods
	errsBefore := len(s.Errors())
	launchesBefore := len(s.Launches())

	s.Timeline.Restart()
	start := time.Now()
	arn := fmt.Sprintf("arn:aws:ec2:us-east-1:123456789012:instance/%s", victim.InstanceID)
	detail := map[string]string{"instance-id": victim.InstanceID, "instance-action": "terminate"}
	for i := 0; i < rep.EventsDelivered; i++ {
		if err := s.PutEvent(ctx, "aws.ec2", "EC2 Spot Instance Interruption Warning", []string{arn}, detail); err != nil {
			return rep, err
		}
		s.Timeline.Printf("scenario", "EC2 Spot Instance Interruption Warning for %s (node %s, %d pods) published to EventBridge (%d/%d)",
			victim.InstanceID, victim.NodeName, pods, i+1, rep.EventsDelivered)
		time.Sleep(200 * time.Millisecond)
	}

	deadline := start.Add(SpotNotice)
	last := ""
	for {
		if rep.ReplacementLaunchedAfterSeconds < 0 {
			if l := s.Launches(); len(l) > launchesBefore {
				rep.ReplacementLaunchedAfterSeconds = round3(l[launchesBefore].At.Sub(start).Seconds())
				running, elsewhere, err := s.inflateRunning(ctx, o.Namespace, victim.NodeName)
				if err != nil {
					return rep, err
				}
				rep.PodsOnNodeAtReplacement = running - elsewhere
			}
		}
		if rep.InterruptedNodeGoneAfterSeconds < 0 {
			_, err := s.Client.CoreV1().Nodes().Get(ctx, victim.NodeName, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				rep.InterruptedNodeGoneAfterSeconds = round3(time.Since(start).Seconds())
				s.Timeline.Printf("scenario", "node %s is gone", victim.NodeName)
			}
		}
		running, elsewhere, err := s.inflateRunning(ctx, o.Namespace, victim.NodeName)
		if err != nil {
			return rep, err
		}
		line := fmt.Sprintf("%d/%d inflate pods running on other nodes (%d in all), replacement launched: %v, node gone: %v",
			elsewhere, o.Replicas, running, rep.ReplacementLaunchedAfterSeconds >= 0, rep.InterruptedNodeGoneAfterSeconds >= 0)
		if line != last {
			s.Timeline.Printf("progress", "%s", line)
			last = line
		}
		if rep.InterruptedNodeGoneAfterSeconds >= 0 && elsewhere >= int(o.Replicas) {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	rep.DurationSeconds = time.Since(start).Seconds()
	if err := s.reclaimIfRunning(ctx, victim.InstanceID, &rep); err != nil {
		return rep, err
	}
	return s.finishSpot(ctx, rep, victim, o, errsBefore)
}

// busiestClaim is the initialized claim of capacityType ("" for any) whose Node runs the most inflate pods.
func (s *Sandbox) busiestClaim(ctx context.Context, namespace, capacityType string) (state.Claim, int, error) {
	claims, err := s.Store.ListClaims(ctx)
	if err != nil {
		return state.Claim{}, 0, err
	}
	list, err := s.Client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: "app=inflate"})
	if err != nil {
		return state.Claim{}, 0, err
	}
	perNode := map[string]int{}
	for _, p := range list.Items {
		perNode[p.Spec.NodeName]++
	}
	var best state.Claim
	most := 0
	for _, c := range claims {
		if c.Lifecycle == state.Initialized && (capacityType == "" || c.CapacityType == capacityType) && perNode[c.NodeName] > most {
			best, most = c, perNode[c.NodeName]
		}
	}
	if most == 0 {
		return best, 0, fmt.Errorf("no initialized %s node runs inflate pods", strings.TrimSpace(capacityType+" Nodewright"))
	}
	return best, most, nil
}

// inflateRunning counts the running inflate pods, and those running on other nodes than node.
func (s *Sandbox) inflateRunning(ctx context.Context, namespace, node string) (running, elsewhere int, err error) {
	return s.podsRunning(ctx, namespace, "inflate", node)
}

// podsRunning counts the running pods of app, and those running on other nodes than node.
func (s *Sandbox) podsRunning(ctx context.Context, namespace, app, node string) (running, elsewhere int, err error) {
	list, err := s.Client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		return 0, 0, err
	}
	for _, p := range list.Items {
		if p.Status.Phase != "Running" || p.DeletionTimestamp != nil {
			continue
		}
		running++
		if p.Spec.NodeName != node {
			elsewhere++
		}
	}
	return running, elsewhere, nil
}

// reclaimIfRunning terminates the instance when the notice ran out and it still runs, as EC2 does.
func (s *Sandbox) reclaimIfRunning(ctx context.Context, id string, rep *SpotInterruptionReport) error {
	insts, err := s.Launcher.List(ctx)
	if err != nil {
		return err
	}
	for _, i := range insts {
		if i.ID == id {
			rep.ReclaimedByEC2 = true
			s.Timeline.Printf("ec2", "notice over: reclaiming %s", id)
			_, err := s.EC2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{id}})
			return err
		}
	}
	return nil
}

func (s *Sandbox) finishSpot(ctx context.Context, rep SpotInterruptionReport, victim state.Claim, o ScaleUpOptions, errsBefore int) (SpotInterruptionReport, error) {
	s.settle(ctx)
	_, elsewhere, err := s.inflateRunning(ctx, o.Namespace, victim.NodeName)
	if err != nil {
		return rep, err
	}
	rep.PodsLost = max(int(o.Replicas)-elsewhere, 0)
	rep.PodsRescheduled = max(rep.PodsOnInterruptedNode-rep.PodsLost, 0)
	decisions, err := s.Store.Decisions(ctx, interruption.ClaimSubject(victim.Name), 100)
	if err != nil {
		return rep, err
	}
	disrupted := 0
	for _, d := range decisions {
		if strings.HasSuffix(d.ID, "/"+string(interruption.MarkDisrupted)) {
			disrupted++
		}
	}
	rep.DuplicateEventsActedOn = max(disrupted-1, 0)
	if rep.Capacity, err = s.capacity(ctx); err != nil {
		return rep, err
	}
	for _, e := range s.Errors()[errsBefore:] {
		rep.Errors = append(rep.Errors, e.Error())
	}
	rep.TargetsMet = map[string]bool{
		"replacementLaunched<=2s": rep.ReplacementLaunchedAfterSeconds >= 0 && rep.ReplacementLaunchedAfterSeconds <= 2,
		"nodeGoneWithinNotice":    rep.InterruptedNodeGoneAfterSeconds >= 0 && rep.InterruptedNodeGoneAfterSeconds <= SpotNotice.Seconds() && !rep.ReclaimedByEC2,
		"noPodsLost":              rep.PodsLost == 0,
		"noDuplicateActions":      disrupted == 1,
		"noLeakedInstances":       rep.LeakedInstances == 0 && len(rep.Leaks) == 0,
	}
	s.Timeline.Printf("scenario", "done: replacement launched after %.3fs, node gone after %.3fs, %d pods rescheduled, %d lost, %d duplicate actions, %d leaked",
		rep.ReplacementLaunchedAfterSeconds, rep.InterruptedNodeGoneAfterSeconds, rep.PodsRescheduled, rep.PodsLost, rep.DuplicateEventsActedOn, rep.LeakedInstances)
	return rep, nil
}

func round3(f float64) float64 { return float64(int64(f*1000+0.5)) / 1000 }
