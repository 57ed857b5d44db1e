package provisioning

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/core/apis"
)

func TestClaimName(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	a, b := claimName("default", r), claimName("default", r)
	assert.Regexp(t, `^default-[a-z0-9]{5}$`, a)
	assert.NotEqual(t, a, b)
	assert.Equal(t, a, claimName("default", rand.New(rand.NewPCG(1, 2))), "the injected source decides")
}

// TestLongestNodePoolNameLaunches: the longest NodePool name validation accepts gives a claim whose every
// launch attempt, up to MaxLaunchAttempts, sends a ClientToken within CreateFleet's limit.
func TestLongestNodePoolNameLaunches(t *testing.T) {
	pool := strings.Repeat("p", apis.MaxNodePoolNameLength)
	claim := claimName(pool, rand.New(rand.NewPCG(1, 2)))
	assert.Len(t, claim, apis.MaxNodeClaimNameLength)

	p := plan()
	p.Request.Claim, p.Request.NodePool, p.Spot, p.OnDemand = claim, pool, nil, nil
	for _, z := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		p.Spot = append(p.Spot, instance.Override{InstanceType: "m5.large", Zone: "us-east-1" + z, SubnetID: "subnet-" + z, LaunchTemplate: "lt"})
	}
	one := &oneAtATime{} // every attempt fails for capacity, so every fallback token is used
	_, err := Launch(context.Background(), one, newStateStore(t), p)
	require.True(t, errors.Is(err, ErrNoCapacity))
	require.Len(t, one.requests, MaxLaunchAttempts)
	for i, req := range one.requests {
		token := req.ClientToken
		if token == "" {
			token = req.Claim
		}
		assert.LessOrEqual(t, len(token), apis.MaxClientTokenLength, "attempt %d: %s", i+1, token)
	}
	assert.Equal(t, attemptToken(claim, MaxLaunchAttempts-1), one.requests[MaxLaunchAttempts-1].ClientToken)
	assert.Len(t, one.requests[MaxLaunchAttempts-1].ClientToken, apis.MaxClientTokenLength, "the bound leaves no room unused")
}
