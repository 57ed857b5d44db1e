package provisioning

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/nodeclass"
)

// TestALaunchIntoAGoneSubnetResolvesTheClassAgain: the warm provisioner resolves its class once; a launch
// EC2 refuses because the cached subnet is gone drops the class, so the next run resolves it again, and
// a refusal that says nothing about the class keeps it.
func TestALaunchIntoAGoneSubnetResolvesTheClassAgain(t *testing.T) {
	ctx := context.Background()
	w, _ := batchWorld(t, 1)
	resolver := w.p.deps.NodeClasses.(*fakeResolver)
	w.p.deps.NodeClasses = nodeclass.NewCache(resolver, time.Hour, time.Now)
	w.p.deps.Launcher = w.ec2
	w.ec2.err = &instance.LaunchError{Kind: instance.KindInvalidRequest, Code: "InvalidParameterValue",
		Message: "The architecture 'arm64' of the specified instance type does not match the architecture 'x86_64' of the specified AMI"}

	rep, err := w.p.Run(ctx, "run-1")
	require.NoError(t, err)
	require.Len(t, rep.LaunchFailures, 1)
	assert.Equal(t, 1, resolver.calls)
	_, err = w.p.Run(ctx, "run-2")
	require.NoError(t, err)
	assert.Equal(t, 1, resolver.calls, "a refusal about the request, not the class: the resolution is kept")

	w.ec2.err = &instance.LaunchError{Kind: instance.KindInvalidRequest, Code: "InvalidSubnetID.NotFound",
		Message: "The subnet ID 'subnet-a' does not exist"}
	rep, err = w.p.Run(ctx, "run-3")
	require.NoError(t, err)
	require.Len(t, rep.LaunchFailures, 1)
	assert.Equal(t, 1, resolver.calls, "still the cached resolution")
	_, err = w.p.Run(ctx, "run-4")
	require.NoError(t, err)
	assert.Equal(t, 2, resolver.calls, "EC2 said the subnet is gone: the class is resolved again")
}
