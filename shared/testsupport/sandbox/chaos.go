package sandbox

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/testsupport/faults"
)

// ChaosRules are the chaos scenario's faults: about 15 % of the functions' AWS calls and of their
// API-server calls fail transiently (throttled, 500, dropped), and 5 % of the AWS calls are slow. The
// scenario must show at least 10 % failing; a run makes a few hundred calls of each kind, so the share
// drawn varies by about two points, and 12 % (the rate before) fell under the floor in about one run in
// ten. Throttles stay at 7 %: the EC2 client's adaptive retry mode answers each one by slowing its own
// request rate, so more of them measure that policy more than recovery; the rest are 500s and drops.
var ChaosRules = []faults.Rule{
	{Target: faults.AWS, Kind: faults.Throttle, Probability: 0.07},
	{Target: faults.AWS, Kind: faults.ServerError, Probability: 0.045},
	{Target: faults.AWS, Kind: faults.Drop, Probability: 0.045},
	{Target: faults.AWS, Kind: faults.Latency, Probability: 0.05, Delay: 200 * time.Millisecond},
	{Target: faults.Kube, Kind: faults.Throttle, Probability: 0.07},
	{Target: faults.Kube, Kind: faults.ServerError, Probability: 0.045},
	{Target: faults.Kube, Kind: faults.Drop, Probability: 0.045},
}

// ChaosReport is the chaos scenario's outcome: the scale-up and spot-interruption flows under faults.
type ChaosReport struct {
	Scenario string `json:"scenario"`
	Seed     uint64 `json:"seed"`
	// FaultsInjected counts the faults by target and kind (aws/throttle, kube/dropped-connection, ...);
	// FaultsTotal all of them; CallsSeen the functions' calls the layer saw while armed, and
	// FailingShare the share of those that failed, by target.
	FaultsInjected map[string]int            `json:"faultsInjected"`
	FaultsTotal    int                       `json:"faultsTotal"`
	CallsSeen      map[faults.Target]int     `json:"callsSeen"`
	FailingShare   map[faults.Target]float64 `json:"failingShare"`
	// FaultErrorsRecovered: errors the functions reported because of an injected fault (a call that
	// failed after the SDK's or client-go's retries); the outcome below shows they recovered.
	FaultErrorsRecovered int `json:"faultErrorsRecovered"`

	PodsRequested int `json:"podsRequested"`
	// PodsBound: inflate pods bound to a node at the end; PodsLost: those not running after the
	// interruption.
	PodsBound       int `json:"podsBound"`
	PodsLost        int `json:"podsLost"`
	LeakedInstances int `json:"leakedInstances"`
	// DuplicateLaunches: instances beyond the first that EC2 holds for one claim (any state).
	DuplicateLaunches               int     `json:"duplicateLaunches"`
	DuplicateEventsActedOn          int     `json:"duplicateEventsActedOn"`
	ReplacementLaunchedAfterSeconds float64 `json:"replacementLaunchedAfterSeconds"`

	SpotInterruption SpotInterruptionReport `json:"spotInterruption"`
	DurationSeconds  float64                `json:"durationSeconds"`
	Errors           []string               `json:"errors,omitempty"`
	TargetsMet       map[string]bool        `json:"targetsMet"`
}

// Worked says whether the loop completed under faults with nothing lost, leaked or done twice.
func (r ChaosReport) Worked() bool {
	for _, ok := range r.TargetsMet {
		if !ok {
			return false
		}
	}
	return len(r.Errors) == 0
}

// Chaos runs the scale-up and spot-interruption flows with ChaosRules armed on the sandbox's fault
// layer (Options.Faults), then disarms it and reports.
func (s *Sandbox) Chaos(ctx context.Context, o ScaleUpOptions) (ChaosReport, error) {
	o.defaults()
	inj := s.opts.Faults
	if inj == nil {
		return ChaosReport{}, fmt.Errorf("the chaos scenario needs a sandbox started with Options.Faults")
	}
	rep := ChaosReport{Scenario: "chaos", Seed: inj.Seed(), PodsRequested: int(o.Replicas), ReplacementLaunchedAfterSeconds: -1}
	errsBefore, faultErrsBefore := len(s.Errors()), len(s.FaultErrors())
	if err := inj.Arm(ChaosRules...); err != nil {
		return rep, err
	}
	s.mu.Lock()
	s.chaos = true
	s.mu.Unlock()
	s.Timeline.Printf("scenario", "chaos: fault layer armed (seed %d) on the functions' AWS and API-server calls", inj.Seed())
	start := time.Now()
	spot, err := s.SpotInterruption(ctx, o)
	inj.Disarm()
	s.mu.Lock()
	s.chaos = false
	s.mu.Unlock()
	rep.DurationSeconds = round3(time.Since(start).Seconds())
	rep.SpotInterruption = spot
	if err != nil {
		return rep, err
	}
	st := inj.Stats()
	rep.FaultsInjected, rep.FaultsTotal, rep.CallsSeen, rep.FailingShare = st.Injected, st.Total, st.Calls, st.FailingShare
	rep.FaultErrorsRecovered = len(s.FaultErrors()) - faultErrsBefore
	rep.PodsLost, rep.DuplicateEventsActedOn = spot.PodsLost, spot.DuplicateEventsActedOn
	rep.ReplacementLaunchedAfterSeconds = spot.ReplacementLaunchedAfterSeconds
	rep.LeakedInstances = spot.LeakedInstances + len(spot.Leaks)
	if rep.PodsBound, err = s.podsBound(ctx, o.Namespace, "inflate"); err != nil {
		return rep, err
	}
	if rep.DuplicateLaunches, err = s.duplicateLaunches(ctx); err != nil {
		return rep, err
	}
	for _, e := range s.Errors()[errsBefore:] {
		rep.Errors = append(rep.Errors, e.Error())
	}
	rep.TargetsMet = map[string]bool{
		"faultsInjected>=20":              rep.FaultsTotal >= 20,
		"awsCallsFailing>=10%":            rep.FailingShare[faults.AWS] >= 0.10,
		"apiServerCallsFailing>=10%":      rep.FailingShare[faults.Kube] >= 0.10,
		"everyPodBound":                   rep.PodsBound == rep.PodsRequested,
		"noPodsLost":                      rep.PodsLost == 0,
		"noLeakedInstances":               rep.LeakedInstances == 0,
		"noDuplicateLaunches":             rep.DuplicateLaunches == 0,
		"noDuplicateEventsActedOn":        rep.DuplicateEventsActedOn == 0,
		"replacementLaunchedAfter<=10s":   rep.ReplacementLaunchedAfterSeconds >= 0 && rep.ReplacementLaunchedAfterSeconds <= 10,
		"interruptedNodeGoneWithinNotice": spot.InterruptedNodeGoneAfterSeconds >= 0 && !spot.ReclaimedByEC2,
	}
	kinds := make([]string, 0, len(rep.FaultsInjected))
	for k, n := range rep.FaultsInjected {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(kinds)
	s.Timeline.Printf("scenario", "chaos done: %d faults (%v) in %v calls, %d recovered errors; %d/%d pods bound, %d lost, %d leaked, %d duplicate launches, %d duplicate events acted on, replacement after %.3fs",
		rep.FaultsTotal, kinds, rep.CallsSeen, rep.FaultErrorsRecovered, rep.PodsBound, rep.PodsRequested, rep.PodsLost, rep.LeakedInstances,
		rep.DuplicateLaunches, rep.DuplicateEventsActedOn, rep.ReplacementLaunchedAfterSeconds)
	return rep, nil
}

// faultsArmed reports whether the chaos scenario runs.
func (s *Sandbox) faultsArmed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.chaos
}

// podsBound counts app's pods bound to a node and not being deleted.
func (s *Sandbox) podsBound(ctx context.Context, namespace, app string) (int, error) {
	list, err := s.Client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, p := range list.Items {
		if p.Spec.NodeName != "" && p.DeletionTimestamp == nil {
			n++
		}
	}
	return n, nil
}

// duplicateLaunches counts the instances, in any state, beyond the first that carry one claim's tag.
func (s *Sandbox) duplicateLaunches(ctx context.Context) (int, error) {
	perClaim := map[string]int{}
	p := ec2.NewDescribeInstancesPaginator(s.EC2, &ec2.DescribeInstancesInput{
		Filters: []ec2types.Filter{{Name: aws.String("tag-key"), Values: []string{instance.TagNodeClaim}}}})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return 0, fmt.Errorf("listing the launched instances: %w", err)
		}
		for _, r := range page.Reservations {
			for _, i := range r.Instances {
				for _, t := range i.Tags {
					if aws.ToString(t.Key) == instance.TagNodeClaim {
						perClaim[aws.ToString(t.Value)]++
					}
				}
			}
		}
	}
	dups := 0
	for claim, n := range perClaim {
		if n > 1 {
			dups += n - 1
			s.Timeline.Printf("scenario", "claim %s has %d instances", claim, n)
		}
	}
	return dups, nil
}
