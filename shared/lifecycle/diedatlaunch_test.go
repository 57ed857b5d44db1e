package lifecycle

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/state"
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

// marks records MarkUnavailable.
type marks struct {
	mu  sync.Mutex
	ttl map[state.Offering]time.Duration
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
// the solves for state.DiedAtLaunchTTL and a LaunchFailed decision says why. One terminated by a user is
// only forgotten.
func TestAClaimWhoseInstanceDiedAtLaunchFailsItsOffering(t *testing.T) {
	died := claimOn("default-died", "default", state.Launched, "i-0died", "")
	died.InstanceType, died.CapacityType = "m5.large", "on-demand"
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
	assert.Contains(t, r.store.decisionsOf("nodeclaim/default-died"), "LaunchFailed/InstanceDiedAtLaunch")
	assert.NotContains(t, r.store.decisionsOf("nodeclaim/default-stopped"), "LaunchFailed/InstanceDiedAtLaunch")
}
