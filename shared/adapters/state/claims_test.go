package state

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestClaimLifecycle(t *testing.T) {
	ctx := context.Background()
	s, clk := newStore(t)

	c, err := s.CreateClaim(ctx, Claim{Name: "default-abc12", NodePool: "default", InstanceTypes: []string{"m7g.large", "m6g.large"},
		Requests: map[string]string{"cpu": "1500m", "memory": "3Gi"}, Labels: map[string]string{"team": "a", "karpenter.sh/nodepool": "default"}})
	require.NoError(t, err)
	assert.Equal(t, Pending, c.Lifecycle)
	assert.EqualValues(t, 1, c.Version)
	read, err := s.GetClaim(ctx, c.Name)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"team": "a", "karpenter.sh/nodepool": "default"}, read.Labels, "labels are stored")

	_, err = s.CreateClaim(ctx, Claim{Name: "default-abc12", NodePool: "default"})
	assert.True(t, IsAlreadyExists(err), "a second create of the same claim must fail: %v", err)

	steps := []struct {
		to     Lifecycle
		mutate func(*Claim)
		check  func(*testing.T, Claim)
	}{
		{Launched, func(c *Claim) {
			c.InstanceID, c.InstanceType, c.Zone, c.CapacityType = "i-0abc", "m7g.large", "us-east-1a", "spot"
		},
			func(t *testing.T, c Claim) { assert.NotNil(t, c.LaunchedAt) }},
		{Registered, func(c *Claim) { c.NodeName = "ip-10-0-0-1.ec2.internal" }, func(t *testing.T, c Claim) { assert.NotNil(t, c.RegisteredAt) }},
		{Initialized, nil, func(t *testing.T, c Claim) { assert.NotNil(t, c.InitializedAt) }},
		{Draining, func(c *Claim) { c.DisruptionReason = "Drifted" }, func(t *testing.T, c Claim) { assert.NotNil(t, c.DrainingAt) }},
		{Terminating, nil, func(t *testing.T, c Claim) { assert.NotNil(t, c.TerminatingAt) }},
		{Deleted, nil, func(t *testing.T, c Claim) {
			require.NotNil(t, c.DeletedAt)
			assert.Equal(t, clk.Now().Add(DeletedClaimRetention).Unix(), c.TTL, "deleted claims expire after the retention")
		}},
	}
	for i, step := range steps {
		clk.Advance(1)
		got, err := s.UpdateClaim(ctx, c.Name, func(c *Claim) error {
			c.Lifecycle = step.to
			if step.mutate != nil {
				step.mutate(c)
			}
			return nil
		})
		require.NoError(t, err, "move to %s", step.to)
		assert.EqualValues(t, i+2, got.Version)
		step.check(t, got)
		read, err := s.GetClaim(ctx, c.Name)
		require.NoError(t, err)
		assert.Equal(t, step.to, read.Lifecycle)
	}
	final, err := s.GetClaim(ctx, c.Name)
	require.NoError(t, err)
	assert.Equal(t, "i-0abc", final.InstanceID)
	assert.Equal(t, map[string]string{"cpu": "1500m", "memory": "3Gi"}, final.Requests)
	assert.Equal(t, []string{"m7g.large", "m6g.large"}, final.InstanceTypes)
}

func TestClaimRejectsBackwardMoves(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	_, err := s.CreateClaim(ctx, Claim{Name: "c1", NodePool: "default"})
	require.NoError(t, err)
	_, err = s.UpdateClaim(ctx, "c1", func(c *Claim) error { c.Lifecycle = Initialized; return nil })
	assert.ErrorIs(t, err, ErrInvalid, "pending → initialized skips launch and registration")
	_, err = s.CreateClaim(ctx, Claim{Name: "", NodePool: "default"})
	assert.ErrorIs(t, err, ErrInvalid)
	_, err = s.GetClaim(ctx, "missing")
	assert.True(t, IsNotFound(err))
}

func TestPutClaimWithStaleVersionConflicts(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	old, err := s.CreateClaim(ctx, Claim{Name: "c1", NodePool: "default"})
	require.NoError(t, err)
	next := old
	next.Zone = "us-east-1a"
	_, err = s.PutClaim(ctx, old, next)
	require.NoError(t, err)
	next.Zone = "us-east-1b"
	_, err = s.PutClaim(ctx, old, next) // still based on version 1
	assert.True(t, IsConflict(err), "want a conflict, got %v", err)
}

func TestConcurrentClaimCreationHasOneWinner(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	errs := race(12, func(i int) error {
		_, err := s.CreateClaim(ctx, Claim{Name: "contended", NodePool: fmt.Sprintf("pool-%d", i)})
		return err
	})
	wins, lost := 0, 0
	for _, err := range errs {
		switch {
		case err == nil:
			wins++
		case IsAlreadyExists(err):
			lost++
		default:
			t.Errorf("unexpected error: %v", err)
		}
	}
	assert.Equal(t, 1, wins, "exactly one creator wins")
	assert.Equal(t, 11, lost)
}

func TestConcurrentUpdatesLoseNothing(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	_, err := s.CreateClaim(ctx, Claim{Name: "c1", NodePool: "default", Requests: map[string]string{}})
	require.NoError(t, err)
	const writers = 4
	errs := race(writers, func(i int) error {
		_, err := s.UpdateClaim(ctx, "c1", func(c *Claim) error {
			c.Requests[fmt.Sprintf("writer-%d", i)] = "1"
			return nil
		})
		return err
	})
	for _, err := range errs {
		require.NoError(t, err)
	}
	c, err := s.GetClaim(ctx, "c1")
	require.NoError(t, err)
	assert.Len(t, c.Requests, writers, "every writer's change survives")
	assert.EqualValues(t, 1+writers, c.Version)
}

func TestClaimIndexes(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t, WithPageSize(7))
	for i := 0; i < 30; i++ {
		name := fmt.Sprintf("claim-%02d", i)
		_, err := s.CreateClaim(ctx, Claim{Name: name, NodePool: "default"})
		require.NoError(t, err)
		if i%3 == 0 {
			_, err = s.UpdateClaim(ctx, name, func(c *Claim) error {
				c.Lifecycle, c.InstanceID = Launched, fmt.Sprintf("i-%04d", i)
				return nil
			})
			require.NoError(t, err)
		}
	}
	all, err := s.ListClaims(ctx)
	require.NoError(t, err)
	assert.Len(t, all, 30, "ListClaims follows pages of 7")

	launched, err := s.ClaimsInLifecycle(ctx, Launched)
	require.NoError(t, err)
	assert.Len(t, launched, 10)
	pending, err := s.ClaimsInLifecycle(ctx, Pending)
	require.NoError(t, err)
	assert.Len(t, pending, 20)

	c, err := s.ClaimByInstance(ctx, "i-0009")
	require.NoError(t, err)
	assert.Equal(t, "claim-09", c.Name)
	_, err = s.ClaimByInstance(ctx, "i-9999")
	assert.True(t, IsNotFound(err))
}

func TestOversizedClaimIsRefused(t *testing.T) {
	s, _ := newStore(t)
	_, err := s.CreateClaim(context.Background(), Claim{Name: "huge", NodePool: "default",
		InstanceTypes: []string{strings.Repeat("x", 400*1024)}})
	assert.ErrorIs(t, err, ErrItemTooLarge)
}

// TestClaimDriftStampsRoundTrip: what drift and expiry read later (hash versions, image, subnet, security
// groups, expireAfter, terminationGracePeriod) is stored and read back as written.
func TestClaimDriftStampsRoundTrip(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	tgp := 90 * time.Minute
	written := Claim{Name: "default-st4mp", NodePool: "default", TemplateHash: "p1", TemplateHashVersion: "v1",
		NodeClassHash: "c1", NodeClassHashVersion: "v1", ExpireAfter: "720h0m0s", TerminationGracePeriod: &tgp}
	_, err := s.CreateClaim(ctx, written)
	require.NoError(t, err)
	_, err = s.UpdateClaim(ctx, written.Name, func(c *Claim) error {
		c.Lifecycle, c.InstanceID = Launched, "i-0abc"
		c.ImageID, c.SubnetID, c.SecurityGroupIDs = "ami-1", "subnet-a", []string{"sg-1", "sg-2"}
		return nil
	})
	require.NoError(t, err)

	c, err := s.GetClaim(ctx, written.Name)
	require.NoError(t, err)
	assert.Equal(t, "v1", c.TemplateHashVersion)
	assert.Equal(t, "v1", c.NodeClassHashVersion)
	assert.Equal(t, "720h0m0s", c.ExpireAfter)
	require.NotNil(t, c.TerminationGracePeriod)
	assert.Equal(t, tgp, *c.TerminationGracePeriod)
	assert.Equal(t, "ami-1", c.ImageID)
	assert.Equal(t, "subnet-a", c.SubnetID)
	assert.Equal(t, []string{"sg-1", "sg-2"}, c.SecurityGroupIDs)

	never, err := s.CreateClaim(ctx, Claim{Name: "default-n3ver", NodePool: "default", ExpireAfter: ExpireNever})
	require.NoError(t, err)
	c, err = s.GetClaim(ctx, never.Name)
	require.NoError(t, err)
	assert.Equal(t, ExpireNever, c.ExpireAfter)
	assert.Nil(t, c.TerminationGracePeriod, "no terminationGracePeriod stays nil")
}

// TestClaimWrittenBeforeDriftStampsStillLoads: a record written before the stamps existed (none of their
// attributes) loads with them empty, which drift reads as unknown.
func TestClaimWrittenBeforeDriftStampsStillLoads(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	item := key(claimPK("default-0ld01", false), "default-0ld01")
	for k, v := range map[string]string{"name": "default-0ld01", "nodePool": "default", "lifecycle": string(Launched),
		"templateHash": "p0", "nodeClassHash": "c0", "instanceId": "i-0old", "createdAt": "2026-01-02T03:04:05Z"} {
		item[k] = str(v)
	}
	item["version"] = num(3)
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: item})
	require.NoError(t, err)

	c, err := s.GetClaim(ctx, "default-0ld01")
	require.NoError(t, err)
	assert.Equal(t, "p0", c.TemplateHash)
	assert.Empty(t, c.TemplateHashVersion)
	assert.Empty(t, c.NodeClassHashVersion)
	assert.Empty(t, c.ImageID)
	assert.Empty(t, c.SubnetID)
	assert.Nil(t, c.SecurityGroupIDs)
	assert.Empty(t, c.ExpireAfter)
	assert.Nil(t, c.TerminationGracePeriod)

	_, err = s.UpdateClaim(ctx, c.Name, func(c *Claim) error { c.ImageID = "ami-1"; return nil })
	require.NoError(t, err, "an old record can be updated with the new fields")
}
