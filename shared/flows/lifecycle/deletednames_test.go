package lifecycle

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// liveClaims lists the live claims only, as state.Store does: deleted claims are read by name.
type liveClaims struct{ *fakeStore }

func (l liveClaims) ListClaims(ctx context.Context) ([]state.Claim, error) {
	all, err := l.fakeStore.ListClaims(ctx)
	var live []state.Claim
	for _, c := range all {
		if c.Lifecycle != state.Deleted {
			live = append(live, c)
		}
	}
	return live, err
}

// TestAnOrphanOfADeletedClaimIsRebuiltUnderAnotherName: an instance still running whose claim was
// deleted (its launch timed out before EC2 answered) gets a claim rebuilt under a name of its own, not
// under the deleted claim's, which stays taken though the live claim list no longer holds it.
func TestAnOrphanOfADeletedClaimIsRebuiltUnderAnotherName(t *testing.T) {
	now := time.Unix(7200, 0)
	store := &fakeStore{claims: []state.Claim{{Name: "default-gone", NodePool: "default", Lifecycle: state.Deleted,
		CreatedAt: time.Unix(0, 0)}}}
	insts := fakeInstances{list: []instance.Instance{{ID: "i-0late", InstanceType: "m7g.large", LaunchTime: time.Unix(7140, 0),
		Tags: map[string]string{instance.TagNodeClaim: "default-gone", instance.TagNodePool: "default"}}}}
	r := NewRunner(RunnerConfig{}, RunnerDeps{Store: liveClaims{store}, Nodes: fakeNodes{}, NodeActions: noWrites{},
		Instances: insts, Now: func() time.Time { return now }})

	rep, err := r.Run(context.Background(), "run-1")
	require.NoError(t, err)
	assert.Empty(t, rep.Errors)
	assert.Equal(t, 1, rep.Rebuilt)
	rebuilt, err := store.GetClaim(context.Background(), "adopted-i-0late")
	require.NoError(t, err, "the orphan's claim is rebuilt under its own name")
	assert.Equal(t, "i-0late", rebuilt.InstanceID)
	gone, err := store.GetClaim(context.Background(), "default-gone")
	require.NoError(t, err)
	assert.Equal(t, state.Deleted, gone.Lifecycle, "the deleted claim is left as it was")
}
