package interruption

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/state"
)

// TestAnInstanceThatDiesBeforeItsNodeRegistersFailsItsOffering: EC2 terminating an instance whose Node
// never registered (Client.InvalidKMSKey.InvalidState, Client.InternalError: a volume key the launching
// role may not use) is a failed launch. Its offering is kept out of the solves for state.DiedAtLaunchTTL
// before the claim goes the usual way; before, the claim was replaced by the same offering, which died
// the same way, every few minutes without end. A registered node that terminates is no failed launch.
func TestAnInstanceThatDiesBeforeItsNodeRegistersFailsItsOffering(t *testing.T) {
	replaceThenDrain := []Step{MarkDisrupted, TaintNode, LaunchReplacement, StartTermination}
	for _, sample := range []string{"interruption-state-shutting-down.json", "interruption-state-terminated.json"} {
		m := parseSample(t, sample)
		for lifecycle, want := range map[state.Lifecycle][]Step{
			state.Launched:    append([]Step{"MarkLaunchFailed"}, replaceThenDrain...),
			state.Registered:  replaceThenDrain,
			state.Initialized: replaceThenDrain,
		} {
			t.Run(sample+"/"+string(lifecycle), func(t *testing.T) {
				claims := map[string]Claim{}
				for _, id := range m.InstanceIDs() {
					claims[id] = toClaim(state.Claim{Name: "claim-" + id, InstanceID: id, Lifecycle: lifecycle, CapacityType: "on-demand",
						InstanceType: "m5.large", Zone: "us-east-1a"}, nil)
				}
				got := Decide(m, claims, RebalanceEventOnly)
				require.Len(t, got, len(m.InstanceIDs()))
				for _, d := range got {
					assert.Equal(t, want, d.Steps)
				}
			})
		}
	}
	m := parseSample(t, "interruption-state-terminated.json")
	claims := map[string]Claim{}
	for _, id := range m.InstanceIDs() {
		claims[id] = toClaim(state.Claim{Name: "claim-" + id, InstanceID: id, Lifecycle: state.Draining}, nil)
	}
	assert.Empty(t, Decide(m, claims, RebalanceEventOnly), "a claim already on its way out (its own drain terminated it) is left alone")
}

// markingStore records MarkUnavailable and RecordLaunchFailure; nothing else of the store is used by the
// step.
type markingStore struct {
	StateStore
	marked   map[state.Offering]time.Duration
	reason   string
	failures map[string][]state.LaunchFailure
}

func (s *markingStore) RecordLaunchFailure(_ context.Context, nodeClass string, f state.LaunchFailure) (bool, error) {
	s.failures[nodeClass] = append(s.failures[nodeClass], f)
	return true, nil
}

func (s *markingStore) MarkUnavailable(_ context.Context, o state.Offering, reason string, ttl time.Duration) error {
	s.marked[o], s.reason = ttl, reason
	return nil
}

// TestMarkLaunchFailedKeepsTheOfferingOutForDiedAtLaunchTTL: the step keeps the offering out and counts
// the failure against the claim's EC2NodeClass, with the spec hash it was launched with, for the class's
// launch back-off.
func TestMarkLaunchFailedKeepsTheOfferingOutForDiedAtLaunchTTL(t *testing.T) {
	store := &markingStore{marked: map[state.Offering]time.Duration{}, failures: map[string][]state.LaunchFailure{}}
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	s := &Service{deps: ServiceDeps{State: store, Now: func() time.Time { return now }}}
	m := parseSample(t, "interruption-state-terminated.json")
	c := state.Claim{Name: "claim-a", InstanceID: m.InstanceIDs()[0], Lifecycle: state.Launched, CapacityType: "on-demand",
		InstanceType: "m5.large", Zone: "us-east-1a", NodeClass: "kms", NodeClassHash: "spec-1"}
	_, note, err := s.act(context.Background(), m, Decision{Claim: c.Name, Instance: c.InstanceID, Reason: m.Kind()}, c, Step("MarkLaunchFailed"))
	require.NoError(t, err)
	assert.Equal(t, map[state.Offering]time.Duration{{InstanceType: "m5.large", Zone: "us-east-1a", CapacityType: "on-demand"}: 30 * time.Minute},
		store.marked)
	assert.Equal(t, "InstanceDiedAtLaunch", store.reason)
	assert.Contains(t, note, "terminated before its Node registered")
	require.Len(t, store.failures["kms"], 1, "the failure counts against the claim's class")
	f := store.failures["kms"][0]
	assert.Equal(t, c.InstanceID, f.InstanceID)
	assert.Equal(t, now, f.At)
	assert.Equal(t, "spec-1", f.SpecHash)
	assert.Contains(t, note, "EC2NodeClass kms's launch back-off")
}
