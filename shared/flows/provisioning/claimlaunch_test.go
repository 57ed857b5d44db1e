package provisioning

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/launchtemplate"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

func testLaunch(store Store, launcher InstanceLauncher) claimLaunch {
	class := testClass(instanceType("m5.xlarge", "amd64", 4, 0.192, "us-east-1a"))
	class.resolved.Status.SecurityGroups = []apis.SecurityGroupStatus{{ID: "sg-2"}, {ID: "sg-1"}}
	tgp := 45 * time.Minute
	stamp := claimStamp{poolHash: "p1", classHash: "c1", lifetime: poolLifetime{expireAfter: "720h0m0s", terminationGracePeriod: &tgp}}
	return claimLaunch{store: store, templates: &fakeTemplates{}, launcher: launcher, newName: names("default-abcde"), stamp: stamp,
		target: claimTarget{class: class, cluster: launchtemplate.Cluster{Name: "demo"}, pool: scheduling.NodePool{Name: "default"},
			claim: scheduling.ClaimPlan{NodePool: "default", InstanceTypeOptions: []string{"m5.xlarge"}, Why: "cheapest",
				Requests: scheduling.Resources{CPU: 2000}, Pods: nil}}}
}

func decisions(t *testing.T, s *state.Store, claim string) []state.Decision {
	t.Helper()
	d, err := s.Decisions(context.Background(), "nodeclaim/"+claim, 10)
	require.NoError(t, err)
	return d
}

func TestClaimLaunchRecordsTheInstance(t *testing.T) {
	s := newStateStore(t)
	ec2 := &fakeEC2Capacity{capacity: map[instance.Offering]bool{{InstanceType: "m5.xlarge", Zone: "us-east-1a", CapacityType: "on-demand"}: true}}
	got, err := testLaunch(s, ec2).run(context.Background())
	require.NoError(t, err)
	assert.Equal(t, &LaunchedClaim{Name: "default-abcde", NodePool: "default", InstanceID: "i-0123", InstanceType: "m5.xlarge",
		Zone: "us-east-1a", CapacityType: "on-demand", Price: 0.192}, got)
	require.Len(t, ec2.requests, 2, "spot first, then on-demand")
	assert.Equal(t, "default-abcde", ec2.requests[0].Claim)

	c, err := s.GetClaim(context.Background(), "default-abcde")
	require.NoError(t, err)
	assert.Equal(t, state.Launched, c.Lifecycle)
	assert.Equal(t, "i-0123", c.InstanceID)
	assert.Equal(t, "aws:///us-east-1a/i-0123", c.ProviderID)
	assert.Equal(t, 0.192, c.PricePerHour)
	assert.Equal(t, map[string]string{"cpu": "2"}, c.Requests)
	assert.Equal(t, []string{"m5.xlarge"}, c.InstanceTypes)
	assert.Equal(t, "p1", c.TemplateHash)
	assert.Equal(t, apis.NodePoolHashVersion, c.TemplateHashVersion)
	assert.Equal(t, "c1", c.NodeClassHash)
	assert.Equal(t, apis.EC2NodeClassHashVersion, c.NodeClassHashVersion)
	assert.Equal(t, "ami-amd64", c.ImageID, "the AMI of the launch template the instance went through")
	assert.Equal(t, "subnet-a", c.SubnetID, "the subnet of the override EC2 chose")
	assert.Equal(t, []string{"sg-1", "sg-2"}, c.SecurityGroupIDs, "the node class's security groups at launch")
	assert.Equal(t, "720h0m0s", c.ExpireAfter, "the NodePool template's expireAfter")
	require.NotNil(t, c.TerminationGracePeriod, "the NodePool template's terminationGracePeriod")
	assert.Equal(t, 45*time.Minute, *c.TerminationGracePeriod)
	d := decisions(t, s, "default-abcde")
	require.Len(t, d, 1)
	assert.Equal(t, "Launch", d[0].Kind)
	assert.Equal(t, "cheapest", d[0].Message)

	unavailable, err := s.UnavailableOfferings(context.Background())
	require.NoError(t, err)
	assert.Len(t, unavailable, 1, "the spot offering without capacity is recorded")
}

func TestClaimLaunchWithoutCapacityDeletesTheClaim(t *testing.T) {
	s := newStateStore(t)
	_, err := testLaunch(s, &fakeEC2Capacity{}).run(context.Background())
	require.ErrorIs(t, err, ErrNoCapacity)
	c, err := s.GetClaim(context.Background(), "default-abcde")
	require.NoError(t, err)
	assert.Equal(t, state.Deleted, c.Lifecycle, "nothing was launched, so nothing stands for it")
	d := decisions(t, s, "default-abcde")
	require.Len(t, d, 1)
	assert.Equal(t, "LaunchFailed", d[0].Kind)
	assert.Equal(t, "InsufficientCapacity", d[0].Reason)
}

func TestClaimLaunchWithUnknownOutcomeLeavesTheClaimPending(t *testing.T) {
	s := newStateStore(t)
	_, err := testLaunch(s, &fakeEC2Capacity{err: errors.New("connection reset")}).run(context.Background())
	require.ErrorContains(t, err, "left pending for reconciliation")
	c, err := s.GetClaim(context.Background(), "default-abcde")
	require.NoError(t, err)
	assert.Equal(t, state.Pending, c.Lifecycle, "the reconciler adopts its instance or times it out")
}

func TestClaimLaunchWithNothingLaunchableDeletesTheClaim(t *testing.T) {
	s := newStateStore(t)
	l := testLaunch(s, &fakeEC2Capacity{})
	l.target.claim.InstanceTypeOptions = []string{"not-in-catalog"}
	_, err := l.run(context.Background())
	require.ErrorContains(t, err, "no offering of its instance types")
	c, err := s.GetClaim(context.Background(), "default-abcde")
	require.NoError(t, err)
	assert.Equal(t, state.Deleted, c.Lifecycle)

	_, err = l.run(context.Background())
	assert.True(t, state.IsAlreadyExists(err), "a claim name is never reused: %v", err)
}

// names draws the given names in turn, then repeats the last.
func names(drawn ...string) func() string {
	return func() string {
		name := drawn[0]
		if len(drawn) > 1 {
			drawn = drawn[1:]
		}
		return name
	}
}

// TestClaimLaunchRetriesATakenName: the first name drawn is already a claim in the table, so the launch
// writes its claim under the next name and launches it; the existing claim is left as it was.
func TestClaimLaunchRetriesATakenName(t *testing.T) {
	ctx := context.Background()
	s := newStateStore(t)
	_, err := s.CreateClaim(ctx, state.Claim{Name: "default-abcde", NodePool: "default", Lifecycle: state.Launched, InstanceID: "i-0999"})
	require.NoError(t, err)
	ec2 := &fakeEC2Capacity{capacity: map[instance.Offering]bool{{InstanceType: "m5.xlarge", Zone: "us-east-1a", CapacityType: "spot"}: true}}
	l := testLaunch(s, ec2)
	l.newName = names("default-abcde", "default-fghij")

	got, err := l.run(ctx)
	require.NoError(t, err)
	require.NotNil(t, got)
	assert.Equal(t, "default-fghij", got.Name)
	require.Len(t, ec2.requests, 1)
	assert.Equal(t, "default-fghij", ec2.requests[0].Claim, "the launch uses the name the claim was written under")
	c, err := s.GetClaim(ctx, "default-fghij")
	require.NoError(t, err)
	assert.Equal(t, state.Launched, c.Lifecycle)
	assert.Equal(t, "i-0123", c.InstanceID)
	assert.Len(t, decisions(t, s, "default-fghij"), 1)

	old, err := s.GetClaim(ctx, "default-abcde")
	require.NoError(t, err)
	assert.Equal(t, "i-0999", old.InstanceID, "the claim that held the name is untouched")
	assert.Empty(t, decisions(t, s, "default-abcde"))
}

// TestClaimLaunchGivesUpAfterBoundedNameDraws: names keep colliding, so the launch stops after
// maxClaimNameDraws without calling EC2, and says which names were taken.
func TestClaimLaunchGivesUpAfterBoundedNameDraws(t *testing.T) {
	ctx := context.Background()
	s := newStateStore(t)
	_, err := s.CreateClaim(ctx, state.Claim{Name: "default-abcde", NodePool: "default"})
	require.NoError(t, err)
	ec2 := &fakeEC2Capacity{}
	l := testLaunch(s, ec2)
	draws := 0
	l.newName = func() string { draws++; return "default-abcde" }

	got, err := l.run(ctx)
	assert.Nil(t, got)
	require.ErrorIs(t, err, state.ErrAlreadyExists)
	assert.Contains(t, err.Error(), "writing a claim for nodepool default: every name drawn was taken (default-abcde, default-abcde, default-abcde)")
	assert.Equal(t, maxClaimNameDraws, draws)
	assert.Empty(t, ec2.requests)
}

// adoptingLauncher launches, then lets the reconciler adopt and register the instance before the
// launch is recorded, as happens when the provisioner's claim update is slow (throttled, retried).
type adoptingLauncher struct {
	*fakeEC2Capacity
	store *state.Store
}

func (a adoptingLauncher) Launch(ctx context.Context, req instance.Request) (instance.Instance, error) {
	inst, err := a.fakeEC2Capacity.Launch(ctx, req)
	if err != nil {
		return inst, err
	}
	for _, next := range []state.Lifecycle{state.Launched, state.Registered} {
		if _, err := a.store.UpdateClaim(ctx, req.Claim, func(c *state.Claim) error {
			c.Lifecycle, c.InstanceID, c.NodeName = next, inst.ID, "ip-10-0-0-1"
			return nil
		}); err != nil {
			return inst, err
		}
	}
	return inst, nil
}

func TestClaimLaunchAcceptsAnAdoptionThatCameFirst(t *testing.T) {
	s := newStateStore(t)
	ec2 := &fakeEC2Capacity{capacity: map[instance.Offering]bool{{InstanceType: "m5.xlarge", Zone: "us-east-1a", CapacityType: "spot"}: true}}
	got, err := testLaunch(s, adoptingLauncher{fakeEC2Capacity: ec2, store: s}).run(context.Background())
	require.NoError(t, err, "the claim records the instance already")
	assert.Equal(t, "i-0123", got.InstanceID)
	c, err := s.GetClaim(context.Background(), "default-abcde")
	require.NoError(t, err)
	assert.Equal(t, state.Registered, c.Lifecycle, "the adoption's newer record stands")
	assert.Equal(t, "ip-10-0-0-1", c.NodeName)
	assert.Len(t, decisions(t, s, "default-abcde"), 1, "the launch decision is recorded")
}
