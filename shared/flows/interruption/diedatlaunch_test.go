package interruption

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/state"
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

// stateReasons answers GoneReasons from a table of codes (an id missing: EC2 no longer knows it).
type stateReasons map[string]string

func (r stateReasons) GoneReasons(_ context.Context, ids []string) (map[string]string, map[string]string, error) {
	codes, messages := map[string]string{}, map[string]string{}
	for _, id := range ids {
		if code, ok := r[id]; ok {
			codes[id], messages[id] = code, "message of "+code
		}
	}
	return codes, messages, nil
}

// TestOnlyAnInstanceEC2KilledAtLaunchCountsAgainstItsClass: the state-change notice does not say why a
// booting instance went. One terminated by a user (or a script) says nothing about its EC2NodeClass and
// must neither hold the class's launches back nor keep its offering out; one EC2 terminated for its
// volume key counts, with EC2's code.
func TestOnlyAnInstanceEC2KilledAtLaunchCountsAgainstItsClass(t *testing.T) {
	m := parseSample(t, "interruption-state-terminated.json")
	id := m.InstanceIDs()[0]
	cases := []struct {
		name     string
		code     string
		counted  bool
		wantCode string
	}{
		{"terminated by a user", "Client.UserInitiatedShutdown", false, ""},
		{"a volume key EC2 may not use", "Client.InvalidKMSKey.InvalidState", true, "Client.InvalidKMSKey.InvalidState"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			store := &markingStore{marked: map[state.Offering]time.Duration{}, failures: map[string][]state.LaunchFailure{}}
			s := &Service{deps: ServiceDeps{State: store, Reasons: stateReasons{id: tc.code}, Now: time.Now}}
			c := state.Claim{Name: "claim-a", InstanceID: id, Lifecycle: state.Launched, CapacityType: "on-demand",
				InstanceType: "m5.large", Zone: "us-east-1a", NodeClass: "kms", NodeClassHash: "spec-1"}
			_, note, err := s.act(context.Background(), m, Decision{Claim: c.Name, Instance: id, Reason: m.Kind()}, c, Step("MarkLaunchFailed"))
			require.NoError(t, err)
			if !tc.counted {
				assert.Empty(t, store.failures, "nothing counts against the class")
				assert.Empty(t, store.marked, "the offering is not kept out")
				assert.Contains(t, note, "not a failed launch")
				return
			}
			require.Len(t, store.failures["kms"], 1)
			assert.Equal(t, tc.wantCode, store.failures["kms"][0].Code)
			assert.Len(t, store.marked, 1)
		})
	}
}
