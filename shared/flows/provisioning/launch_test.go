package provisioning

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/testsupport/awstest"
)

func TestMain(m *testing.M) { os.Exit(awstest.Main(m)) }

// fakeEC2Capacity behaves like CreateFleet instant for one instance: it launches the first override,
// in the order given, that has capacity, and otherwise fails every override with a capacity error. A run
// launches up to MaxConcurrentLaunches claims at once, so it notes requests under a lock.
type fakeEC2Capacity struct {
	mu       sync.Mutex
	capacity map[instance.Offering]bool
	err      error
	requests []instance.Request
}

func (f *fakeEC2Capacity) Launch(_ context.Context, req instance.Request) (instance.Instance, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, req)
	if f.err != nil {
		return instance.Instance{}, f.err
	}
	ice := &instance.InsufficientCapacityError{Codes: []string{"InsufficientInstanceCapacity"}}
	for _, o := range req.Overrides {
		off := instance.Offering{InstanceType: o.InstanceType, Zone: o.Zone, CapacityType: req.CapacityType}
		if f.capacity[off] {
			// Like EC2, a fleet that launched still reports the pools it found full on the way.
			return instance.Instance{ID: "i-0123", InstanceType: o.InstanceType, Zone: o.Zone, CapacityType: req.CapacityType,
				CapacityReservationID: o.ReservationID, InterruptibleReservation: o.Interruptible, NoCapacity: ice.Offerings}, nil
		}
		ice.Offerings = append(ice.Offerings, off)
	}
	return instance.Instance{}, ice
}

func newStateStore(t *testing.T) *state.Store {
	t.Helper()
	moto := awstest.Shared(t)
	db := state.NewClient(moto.Config())
	_, err := db.CreateTable(context.Background(), state.CreateTableInput("state"))
	require.NoError(t, err)
	return state.New(db, "state")
}

func plan() LaunchPlan {
	return LaunchPlan{
		Request: instance.Request{Cluster: "demo", Claim: "default-abc12", NodePool: "default", NodeClass: "default"},
		Spot: []instance.Override{
			{InstanceType: "c5.large", Zone: "us-east-1a", SubnetID: "subnet-a", LaunchTemplate: "lt", Price: 0.03},
			{InstanceType: "m5.large", Zone: "us-east-1a", SubnetID: "subnet-a", LaunchTemplate: "lt", Price: 0.04},
			{InstanceType: "m5.large", Zone: "us-east-1b", SubnetID: "subnet-b", LaunchTemplate: "lt", Price: 0.04},
		},
		OnDemand: []instance.Override{
			{InstanceType: "c5.large", Zone: "us-east-1a", SubnetID: "subnet-a", LaunchTemplate: "lt", Price: 0.085},
			{InstanceType: "m5.large", Zone: "us-east-1b", SubnetID: "subnet-b", LaunchTemplate: "lt", Price: 0.096},
		},
	}
}

func TestLaunchFallsBackToOnDemandAndRecordsCapacityFailures(t *testing.T) {
	ctx := context.Background()
	store := newStateStore(t)
	ec2 := &fakeEC2Capacity{capacity: map[instance.Offering]bool{{InstanceType: "m5.large", Zone: "us-east-1b", CapacityType: "on-demand"}: true}}

	res, err := Launch(ctx, ec2, store, plan())
	require.NoError(t, err)
	assert.Equal(t, "m5.large", res.Instance.InstanceType)
	assert.Equal(t, "on-demand", res.Instance.CapacityType)
	assert.Equal(t, 2, res.Attempts, "every spot offering fails in one fleet, then on-demand launches")
	assert.Len(t, res.Unavailable, 4, "3 spot offerings, and on-demand c5.large the second fleet skipped")

	require.Len(t, ec2.requests, 2)
	assert.Equal(t, "", ec2.requests[0].ClientToken, "the first attempt uses the claim name")
	assert.Equal(t, "default-abc12-1", ec2.requests[1].ClientToken, "a fallback has a token of its own")
	assert.Equal(t, "spot", ec2.requests[0].CapacityType)
	assert.Equal(t, "on-demand", ec2.requests[1].CapacityType)

	marked, err := store.UnavailableOfferings(ctx)
	require.NoError(t, err)
	assert.Len(t, marked, 4, "every capacity failure is in the shared table for the next solve")
	for _, m := range marked {
		assert.Equal(t, "InsufficientInstanceCapacity", m.Reason)
	}
}

func TestLaunchRetriesWhatIsLeftAfterAPartialCapacityAnswer(t *testing.T) {
	ctx := context.Background()
	store := newStateStore(t)
	one := &oneAtATime{capacity: instance.Offering{InstanceType: "m5.large", Zone: "us-east-1b", CapacityType: "spot"}}
	res, err := Launch(ctx, one, store, plan())
	require.NoError(t, err)
	assert.Equal(t, 3, res.Attempts, "c5.large@a fails, m5.large@a fails, m5.large@b launches")
	assert.Equal(t, "spot", res.Instance.CapacityType)
	require.Len(t, one.requests, 3)
	assert.Len(t, one.requests[2].Overrides, 1, "offerings that failed are not offered again")
	assert.Equal(t, "default-abc12-2", one.requests[2].ClientToken)
}

func TestLaunchStopsOnOtherErrors(t *testing.T) {
	store := newStateStore(t)
	ec2 := &fakeEC2Capacity{err: &instance.LaunchError{Kind: instance.KindUnauthorized, Code: "UnauthorizedOperation"}}
	res, err := Launch(context.Background(), ec2, store, plan())
	assert.Equal(t, instance.KindUnauthorized, instance.KindOf(err))
	assert.Equal(t, 1, res.Attempts, "a permissions error is not retried on other offerings")
}

func TestLaunchWithNoCapacityAnywhere(t *testing.T) {
	ctx := context.Background()
	store := newStateStore(t)
	res, err := Launch(ctx, &fakeEC2Capacity{}, store, plan())
	assert.True(t, errors.Is(err, ErrNoCapacity), "got %v", err)
	assert.Equal(t, 2, res.Attempts, "one attempt per capacity type when every offering fails at once")
	marked, err := store.UnavailableOfferings(ctx)
	require.NoError(t, err)
	assert.Len(t, marked, 5)
}

func TestLaunchAttemptsAreBounded(t *testing.T) {
	p := plan()
	p.Spot = nil
	for _, z := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		p.Spot = append(p.Spot, instance.Override{InstanceType: "m5.large", Zone: "us-east-1" + z, SubnetID: "subnet-" + z, LaunchTemplate: "lt"})
	}
	// Every answer names only the first override, so each attempt removes one.
	one := &oneAtATime{}
	res, err := Launch(context.Background(), one, newStateStore(t), p)
	assert.True(t, errors.Is(err, ErrNoCapacity))
	assert.Equal(t, MaxLaunchAttempts, res.Attempts)
}

// oneAtATime tries only the first override of each request and launches only into capacity.
type oneAtATime struct {
	capacity instance.Offering
	requests []instance.Request
}

func (f *oneAtATime) Launch(_ context.Context, req instance.Request) (instance.Instance, error) {
	f.requests = append(f.requests, req)
	o := req.Overrides[0]
	off := instance.Offering{InstanceType: o.InstanceType, Zone: o.Zone, CapacityType: req.CapacityType}
	if off == f.capacity {
		return instance.Instance{ID: "i-0456", InstanceType: o.InstanceType, Zone: o.Zone, CapacityType: req.CapacityType}, nil
	}
	return instance.Instance{}, &instance.InsufficientCapacityError{Codes: []string{"InsufficientInstanceCapacity"},
		Offerings: []instance.Offering{off}}
}
