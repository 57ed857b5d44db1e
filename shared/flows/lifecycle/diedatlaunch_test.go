package lifecycle

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

// reasons answers GoneReasons from a fixed table.
type reasons map[string]string

func (r reasons) GoneReasons(_ context.Context, ids []string) (map[string]string, map[string]string, error) {
	codes, messages := map[string]string{}, map[string]string{}
	for _, id := range ids {
		if c, ok := r[id]; ok {
			codes[id], messages[id] = c, "The key is not usable"
		}
	}
	return codes, messages, nil
}

// marks records MarkUnavailable and RecordLaunchFailure.
type marks struct {
	mu       sync.Mutex
	ttl      map[state.Offering]time.Duration
	failures map[string][]state.LaunchFailure
}

// MarkSubnetUnavailable is the subnet half of the recorder: a launch that died at start names no subnet, so
// nothing here marks one.
func (m *marks) MarkSubnetUnavailable(context.Context, string, string, string, time.Duration) error {
	return nil
}

func (m *marks) RecordLaunchFailure(_ context.Context, nodeClass string, f state.LaunchFailure) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.failures == nil {
		m.failures = map[string][]state.LaunchFailure{}
	}
	m.failures[nodeClass] = append(m.failures[nodeClass], f)
	return true, nil
}

func (m *marks) MarkUnavailable(_ context.Context, o state.Offering, _ string, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ttl[o] = ttl
	return nil
}

// TestAClaimWhoseInstanceDiedAtLaunchFailsItsOffering: when the state-change event was missed, the pass
// that forgets a launched claim whose instance is gone asks EC2 why it went. An instance EC2 terminated
// while launching it (Client.InvalidKMSKey.InvalidState) is a failed launch: its offering is kept out of
// the solves for state.DiedAtLaunchTTL, the failure is counted against the claim's EC2NodeClass (with the
// spec hash it was launched with and EC2's state reason: the class's launch back-off) and a LaunchFailed
// decision says why. One terminated by a user is only forgotten.
func TestAClaimWhoseInstanceDiedAtLaunchFailsItsOffering(t *testing.T) {
	died := claimOn("default-died", "default", state.Launched, "i-0died", "")
	died.InstanceType, died.CapacityType, died.NodeClass, died.NodeClassHash = "m5.large", "on-demand", "kms", "spec-1"
	stopped := claimOn("default-stopped", "default", state.Launched, "i-0stopped", "")
	stopped.InstanceType, stopped.CapacityType = "c5.large", "spot"
	r := newRig(t, died, stopped)
	m := &marks{ttl: map[state.Offering]time.Duration{}}
	runner := NewRunner(RunnerConfig{}, RunnerDeps{Store: r.store, Nodes: r.nodes, NodeActions: r.writer,
		Instances: r.instances, Terminations: r.queue, Now: func() time.Time { return r.now },
		GoneReasons: reasons{"i-0died": "Client.InvalidKMSKey.InvalidState", "i-0stopped": "Client.UserInitiatedShutdown"},
		Unavailable: m})
	rep, err := runner.Run(context.Background(), "run-1")
	require.NoError(t, err)
	assert.Equal(t, 1, rep.DiedAtLaunch)
	assert.Equal(t, 2, rep.ClaimsDeleted, "both claims are forgotten")
	assert.Equal(t, map[state.Offering]time.Duration{{InstanceType: "m5.large", Zone: "us-east-1a", CapacityType: "on-demand"}: 30 * time.Minute},
		m.ttl, "only the offering whose launch failed is kept out")
	assert.Equal(t, map[string][]state.LaunchFailure{"kms": {{InstanceID: "i-0died", At: r.now, SpecHash: "spec-1",
		Code: "Client.InvalidKMSKey.InvalidState", Message: "The key is not usable"}}}, m.failures,
		"only the instance that died at launch counts against its class")
	assert.Contains(t, r.store.decisionsOf("nodeclaim/default-died"), "LaunchFailed/InstanceDiedAtLaunch")
	assert.NotContains(t, r.store.decisionsOf("nodeclaim/default-stopped"), "LaunchFailed/InstanceDiedAtLaunch")
}
