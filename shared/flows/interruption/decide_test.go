package interruption

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/flows/interruption/messages"
)

func parseSample(t *testing.T, name string) messages.Message {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("..", "..", "..", "events", name))
	require.NoError(t, err)
	m, err := Parse(body)
	require.NoError(t, err)
	return m
}

// claimsFor makes every instance of the message one of ours, in the given phase and capacity type.
func claimsFor(m messages.Message, phase ClaimPhase, capacityType string) map[string]Claim {
	out := map[string]Claim{}
	for _, id := range m.InstanceIDs() {
		out[id] = Claim{Name: "claim-" + id, InstanceID: id, CapacityType: capacityType, InstanceType: "m5.large", Zone: "us-east-1a", Phase: phase}
	}
	return out
}

func TestDecideReplacementFirst(t *testing.T) {
	replaceThenDrain := []Step{MarkDisrupted, TaintNode, LaunchReplacement, StartTermination}
	cases := []struct {
		sample       string
		capacityType string
		rebalance    RebalancePolicy
		want         []Step
	}{
		{"interruption-spot-warning.json", "spot", RebalanceEventOnly, append([]Step{MarkOfferingUnavailable}, replaceThenDrain...)},
		{"interruption-health-ec2-scheduled-change.json", "on-demand", RebalanceEventOnly, replaceThenDrain},
		{"interruption-state-stopping.json", "on-demand", RebalanceEventOnly, replaceThenDrain},
		{"interruption-capacity-reservation-warning.json", "reserved", RebalanceEventOnly, replaceThenDrain},
		{"interruption-rebalance-recommendation.json", "spot", RebalanceEventOnly, []Step{RecordEvent}},
		{"interruption-rebalance-recommendation.json", "spot", RebalanceReplace, replaceThenDrain},
		// The instance may still run its pods while it shuts down: replacement and the termination flow,
		// never a clean-up that deletes the Node and its pods at once.
		{"interruption-state-terminated.json", "spot", RebalanceEventOnly, replaceThenDrain},
		{"interruption-state-shutting-down.json", "on-demand", RebalanceEventOnly, replaceThenDrain},
	}
	for _, tc := range cases {
		t.Run(tc.sample+"/"+string(tc.rebalance), func(t *testing.T) {
			m := parseSample(t, tc.sample)
			got := Decide(m, claimsFor(m, Running, tc.capacityType), tc.rebalance)
			require.Len(t, got, len(m.InstanceIDs()))
			for _, d := range got {
				assert.Equal(t, tc.want, d.Steps)
				assert.Equal(t, m.Kind(), d.Reason)
			}
		})
	}
}

func TestSpotDeadlineIsTheActionTime(t *testing.T) {
	m := parseSample(t, "interruption-spot-warning.json")
	got := Decide(m, claimsFor(m, Running, "spot"), RebalanceEventOnly)
	require.Len(t, got, 1)
	assert.Equal(t, m.StartTime().Add(2*time.Minute), got[0].Deadline)
}

func TestDuplicatesAndReorderingNeverActTwice(t *testing.T) {
	spot := parseSample(t, "interruption-spot-warning.json")
	// The claim is already disrupted (the first delivery acted and set its deadline): a duplicate or a
	// later stopping notice asks for nothing more.
	disrupted := claimsFor(spot, Disrupted, "spot")
	for id, c := range disrupted {
		c.GoneBy = spot.StartTime().Add(2 * time.Minute)
		disrupted[id] = c
	}
	assert.Empty(t, Decide(spot, disrupted, RebalanceEventOnly))
	stopping := parseSample(t, "interruption-state-stopping.json")
	assert.Empty(t, Decide(stopping, claimsFor(stopping, Terminating, "on-demand"), RebalanceEventOnly))
	// A shutting-down or terminated instance whose claim is already on its way out is left to the
	// termination flow under way, which waits for the instance to be gone before it removes anything.
	for _, sample := range []string{"interruption-state-shutting-down.json", "interruption-state-terminated.json"} {
		m := parseSample(t, sample)
		for _, phase := range []ClaimPhase{Disrupted, Terminating} {
			assert.Empty(t, Decide(m, claimsFor(m, phase, "spot"), RebalanceEventOnly), "%s, claim %s", sample, phase)
		}
	}
}

func TestAnEarlierDeadlineReachesAClaimAlreadyDraining(t *testing.T) {
	spot := parseSample(t, "interruption-spot-warning.json")
	deadline := spot.StartTime().Add(2 * time.Minute)
	// Draining without a deadline (a rebalance replacement, a consolidation): the replacement and the taint
	// are there already, the notice's deadline is not.
	got := Decide(spot, claimsFor(spot, Disrupted, "spot"), RebalanceEventOnly)
	require.Len(t, got, 1)
	assert.Equal(t, []Step{MarkOfferingUnavailable, MarkDisrupted, StartTermination}, got[0].Steps)
	assert.Equal(t, deadline, got[0].Deadline)

	later := claimsFor(spot, Disrupted, "spot")
	for id, c := range later {
		c.GoneBy = deadline.Add(time.Minute)
		later[id] = c
	}
	got = Decide(spot, later, RebalanceEventOnly)
	require.Len(t, got, 1, "a later deadline on the claim is brought forward")
	assert.Equal(t, []Step{MarkOfferingUnavailable, MarkDisrupted, StartTermination}, got[0].Steps)

	earlier := claimsFor(spot, Disrupted, "spot")
	for id, c := range earlier {
		c.GoneBy = deadline.Add(-time.Minute)
		earlier[id] = c
	}
	assert.Empty(t, Decide(spot, earlier, RebalanceEventOnly), "an earlier deadline already rules")

	stopping := parseSample(t, "interruption-state-stopping.json")
	assert.Empty(t, Decide(stopping, claimsFor(stopping, Disrupted, "on-demand"), RebalanceEventOnly),
		"a notice without a deadline adds nothing to a drain under way")
}

func TestInstancesThatAreNotOursAreIgnored(t *testing.T) {
	m := parseSample(t, "interruption-spot-warning-unknown-instance.json")
	assert.Empty(t, Decide(m, map[string]Claim{"i-0000000000000000a": {Name: "other"}}, RebalanceEventOnly))
	noop := parseSample(t, "interruption-state-running.json")
	assert.Empty(t, Decide(noop, claimsFor(noop, Running, "spot"), RebalanceEventOnly))
}

// TestDecideCapacityReservationWarningMarksTheReservation checks that an interruptible reservation's
// warning marks the reservation unavailable before the drain, for a claim that names it.
func TestDecideCapacityReservationWarningMarksTheReservation(t *testing.T) {
	m := parseSample(t, "interruption-capacity-reservation-warning.json")
	claims := claimsFor(m, Running, "reserved")
	for id, c := range claims {
		c.ReservationID = "cr-1"
		claims[id] = c
	}
	got := Decide(m, claims, RebalanceEventOnly)
	require.Len(t, got, 1)
	assert.Equal(t, []Step{MarkReservationUnavailable, MarkDisrupted, TaintNode, LaunchReplacement, StartTermination}, got[0].Steps)

	spot := parseSample(t, "interruption-spot-warning.json")
	for _, d := range Decide(spot, claimsFor(spot, Running, "on-demand"), RebalanceEventOnly) {
		assert.NotContains(t, d.Steps, MarkOfferingUnavailable, "only a spot claim's offering is marked")
	}
}
