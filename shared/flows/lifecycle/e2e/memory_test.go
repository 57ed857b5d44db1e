package e2e

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

// Once a claim's Node has registered, the pass records the memory capacity the Node reports under the
// claim's instance type and AMI, for the plans; the passes after it write nothing more.
func TestRegisteredNodeRecordsItsMemory(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	inst := e.launch(t, "default-mem01", "default")
	e.launchedClaim(t, "default-mem01", "default", inst)
	_, err := e.store.UpdateClaim(ctx, "default-mem01", func(c *state.Claim) error {
		c.ImageID = "ami-0123456789abcdef0"
		return nil
	})
	require.NoError(t, err)
	e.joinNode(t, "ip-10-0-1-41.ec2.internal", inst, "default")
	r := e.runner(nil)

	rep, err := r.Run(ctx, "run-1")
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Registered, rep.String())
	rep, err = r.Run(ctx, "run-2")
	require.NoError(t, err)
	assert.Equal(t, 1, rep.MemoryRecorded, rep.String())
	got, err := e.store.MemoryObservations(ctx)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, "m5.large", got[0].InstanceType)
	assert.Equal(t, "ami-0123456789abcdef0", got[0].ImageID)
	assert.Equal(t, int64(8)<<30, got[0].MemoryBytes, "the Node's status.capacity.memory")
	assert.Equal(t, "ip-10-0-1-41.ec2.internal", got[0].Node)

	rep, err = r.Run(ctx, "run-3")
	require.NoError(t, err)
	assert.Zero(t, rep.MemoryRecorded, "nothing new: nothing written")
}
