package provisioning

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/nodeclass"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

var readAt = time.Date(2026, 12, 2, 5, 0, 0, 0, time.UTC)

// twoSubnetClass is testClass with two subnets in us-east-1a (a1 with more free addresses than a2) and one
// in us-east-1b, read at readAt, choosing over run.
func twoSubnetClass(run *runSubnets, claims []state.Claim, types ...*scheduling.InstanceType) *readyClass {
	rc := testClass(types...)
	rc.resolved.Subnets = []nodeclass.Subnet{
		{ID: "subnet-a1", Zone: "us-east-1a", AvailableIPs: 300},
		{ID: "subnet-b", Zone: "us-east-1b", AvailableIPs: 250},
		{ID: "subnet-a2", Zone: "us-east-1a", AvailableIPs: 200},
	}
	rc.resolved.SubnetsReadAt = readAt
	rc.subnets = nodeclass.BestPerZone(rc.resolved.Subnets)
	rc.chooseSubnets(subnetView{run: run, claims: claims})
	return rc
}

func launchedInto(name, subnet, instanceType string, at time.Time) state.Claim {
	return state.Claim{Name: name, NodeClass: "default", Lifecycle: state.Launched, SubnetID: subnet, InstanceType: instanceType,
		LaunchedAt: &at}
}

// zoneSubnet is the subnet a plan of one claim of m5.xlarge (110 pods) goes into in zone.
func zoneSubnet(t *testing.T, rc *readyClass, zone string) (string, LaunchPlan) {
	t.Helper()
	target := claimTarget{claim: scheduling.ClaimPlan{InstanceTypeOptions: []string{"m5.xlarge"}}, class: rc}
	plan, err := buildLaunchPlan(context.Background(), &fakeTemplates{}, target, instance.Request{})
	require.NoError(t, err)
	for _, o := range plan.OnDemand {
		if o.Zone == zone {
			return o.SubnetID, plan
		}
	}
	return "", plan
}

func TestSubnetChoiceTakesTheMostFreeAddressesLessThoseLaunchedSince(t *testing.T) {
	m5 := instanceType("m5.xlarge", "amd64", 4, 0.192, "us-east-1a", "us-east-1b")
	rc := twoSubnetClass(newRunSubnets(nil), nil, m5)
	got, _ := zoneSubnet(t, rc, "us-east-1a")
	assert.Equal(t, "subnet-a1", got, "most free addresses")

	// Two m5.xlarge (110 pods each) launched into a1 since its count was read leave it 80 addresses; one
	// launched before the read is in EC2's count already.
	claims := []state.Claim{
		launchedInto("c1", "subnet-a1", "m5.xlarge", readAt.Add(time.Second)),
		launchedInto("c2", "subnet-a1", "m5.xlarge", readAt.Add(time.Minute)),
		launchedInto("c0", "subnet-a2", "m5.xlarge", readAt.Add(-time.Minute)),
	}
	rc = twoSubnetClass(newRunSubnets(nil), claims, m5)
	got, _ = zoneSubnet(t, rc, "us-east-1a")
	assert.Equal(t, "subnet-a2", got, "a1 is predicted to have 80 free addresses, a2 200")
}

func TestABurstSpreadsOverTheZonesSubnets(t *testing.T) {
	m5 := instanceType("m5.xlarge", "amd64", 4, 0.192, "us-east-1a", "us-east-1b")
	rc := twoSubnetClass(newRunSubnets(nil), nil, m5)
	var picks []string
	var plans []LaunchPlan
	for range 3 { // three launches planned while the others' fleet calls are out
		got, plan := zoneSubnet(t, rc, "us-east-1a")
		picks, plans = append(picks, got), append(plans, plan)
	}
	// a1 300 → 190 after the first reservation (110 pods), below a2's 200; a2 → 90, below a1's 190.
	assert.Equal(t, []string{"subnet-a1", "subnet-a2", "subnet-a1"}, picks)

	// The first launch went to us-east-1b: its reservations in us-east-1a are given back.
	plans[0].subnets.settle([]instance.Instance{{InstanceType: "m5.xlarge", Zone: "us-east-1b"}}, rc.podsOf, false)
	plans[1].subnets.settle(nil, rc.podsOf, false) // failed: everything back
	rc.choice.run.mu.Lock()
	defer rc.choice.run.mu.Unlock()
	assert.Equal(t, int64(110), rc.choice.run.used["subnet-a1"], "only the third launch's reservation is left in a1")
	assert.Equal(t, int64(0), rc.choice.run.used["subnet-a2"])
	assert.Equal(t, int64(110+110), rc.choice.run.used["subnet-b"], "the third's reservation and the first's instance")
}

func TestAZoneIsOutOnlyWhenEveryOneOfItsSubnetsIsMarked(t *testing.T) {
	available := func(rc *readyClass, zone string) bool {
		for _, o := range rc.byName["m5.xlarge"].Offerings {
			if o.Zone == zone {
				return o.Available
			}
		}
		return false
	}
	m5 := func() *scheduling.InstanceType {
		return instanceType("m5.xlarge", "amd64", 4, 0.192, "us-east-1a", "us-east-1b")
	}
	rc := twoSubnetClass(newRunSubnets([]state.UnavailableSubnet{{SubnetID: "subnet-a1", Zone: "us-east-1a"}}), nil, m5())
	assert.True(t, available(rc, "us-east-1a"), "a2 still has addresses")
	got, _ := zoneSubnet(t, rc, "us-east-1a")
	assert.Equal(t, "subnet-a2", got, "the marked subnet is passed over")

	rc = twoSubnetClass(newRunSubnets([]state.UnavailableSubnet{{SubnetID: "subnet-a1"}, {SubnetID: "subnet-a2"}}), nil, m5())
	assert.False(t, available(rc, "us-east-1a"), "every subnet of the zone is marked")
	assert.True(t, available(rc, "us-east-1b"))
	got, _ = zoneSubnet(t, rc, "us-east-1a")
	assert.Empty(t, got, "no override in a zone without an unmarked subnet")
}

// fullSubnetEC2 launches one instance from the first override whose subnet is not full, and answers a
// request whose overrides are all in full subnets as EC2 does: InsufficientFreeAddressesInSubnet.
type fullSubnetEC2 struct {
	full     map[string]bool
	requests []instance.Request
}

func (f *fullSubnetEC2) Launch(_ context.Context, req instance.Request) (instance.Instance, error) {
	f.requests = append(f.requests, req)
	ice := &instance.InsufficientCapacityError{}
	for _, o := range req.Overrides {
		if !f.full[o.SubnetID] {
			return instance.Instance{ID: "i-0789", InstanceType: o.InstanceType, Zone: o.Zone, CapacityType: req.CapacityType,
				SubnetID: o.SubnetID, ExhaustedSubnets: ice.Subnets}, nil
		}
		if len(ice.Subnets) == 0 {
			ice.Codes = []string{instance.CodeInsufficientFreeAddresses}
			ice.Subnets = append(ice.Subnets, instance.ExhaustedSubnet{SubnetID: o.SubnetID, Zone: o.Zone})
		}
	}
	return instance.Instance{}, ice
}

func TestAFullSubnetMovesTheLaunchToTheZonesNextSubnet(t *testing.T) {
	ctx := context.Background()
	store := newStateStore(t)
	m5 := instanceType("m5.xlarge", "amd64", 4, 0.192, "us-east-1a", "us-east-1b")
	rc := twoSubnetClass(newRunSubnets(nil), nil, m5)
	// Pinned to us-east-1a (a pod's EBS volume), on-demand.
	target := claimTarget{claim: scheduling.ClaimPlan{InstanceTypeOptions: []string{"m5.xlarge"}, Requirements: []scheduling.NodeSelectorRequirement{
		{Key: scheduling.LabelZone, Operator: scheduling.OpIn, Values: []string{"us-east-1a"}},
		{Key: scheduling.LabelCapacityType, Operator: scheduling.OpIn, Values: []string{"on-demand"}},
	}}, class: rc}
	plan, err := buildLaunchPlan(ctx, &fakeTemplates{}, target, instance.Request{Cluster: "demo", Claim: "default-sub01", NodePool: "default", NodeClass: "default"})
	require.NoError(t, err)
	ec2 := &fullSubnetEC2{full: map[string]bool{"subnet-a1": true}}

	res, err := Launch(ctx, ec2, store, plan)
	require.NoError(t, err, "the zone's other subnet has addresses")
	assert.Equal(t, "subnet-a2", res.Instance.SubnetID)
	require.Len(t, ec2.requests, 2)
	assert.Equal(t, "subnet-a1", ec2.requests[0].Overrides[0].SubnetID)
	assert.Equal(t, "subnet-a2", ec2.requests[1].Overrides[0].SubnetID, "the same offering, moved to the next subnet")
	assert.Equal(t, []instance.ExhaustedSubnet{{SubnetID: "subnet-a1", Zone: "us-east-1a"}}, res.ExhaustedSubnets)

	marked, err := store.UnavailableSubnets(ctx)
	require.NoError(t, err)
	require.Len(t, marked, 1)
	assert.Equal(t, "subnet-a1", marked[0].SubnetID)
	assert.Equal(t, instance.CodeInsufficientFreeAddresses, marked[0].Reason)
	offerings, err := store.UnavailableOfferings(ctx)
	require.NoError(t, err)
	assert.Empty(t, offerings, "the offering is not taken out of the zone")

	// The claim records the subnet the instance went into, not the full one the plan's override named.
	_, subnet, _ := launchedWith(plan, plan.OnDemand[0], true, nil, instance.Instance{Zone: "us-east-1a"})
	assert.Equal(t, "subnet-a2", subnet)

	// Later launches of the run skip the full subnet.
	got, _ := zoneSubnet(t, rc, "us-east-1a")
	assert.Equal(t, "subnet-a2", got)
}

func TestALaunchFailsNamingTheFullSubnetWhenTheZoneHasNoOther(t *testing.T) {
	ctx := context.Background()
	store := newStateStore(t)
	m5 := instanceType("m5.xlarge", "amd64", 4, 0.192, "us-east-1a", "us-east-1b")
	rc := twoSubnetClass(newRunSubnets(nil), nil, m5)
	target := claimTarget{claim: scheduling.ClaimPlan{InstanceTypeOptions: []string{"m5.xlarge"}, Requirements: []scheduling.NodeSelectorRequirement{
		{Key: scheduling.LabelZone, Operator: scheduling.OpIn, Values: []string{"us-east-1a"}},
		{Key: scheduling.LabelCapacityType, Operator: scheduling.OpIn, Values: []string{"on-demand"}},
	}}, class: rc}
	plan, err := buildLaunchPlan(ctx, &fakeTemplates{}, target, instance.Request{Cluster: "demo", Claim: "default-sub02", NodePool: "default", NodeClass: "default"})
	require.NoError(t, err)
	_, err = Launch(ctx, &fullSubnetEC2{full: map[string]bool{"subnet-a1": true, "subnet-a2": true}}, store, plan)
	require.ErrorIs(t, err, ErrNoCapacity)
	assert.Contains(t, err.Error(), "subnets subnet-a1 (us-east-1a), subnet-a2 (us-east-1a) had no free IP address (InsufficientFreeAddressesInSubnet)")
	assert.True(t, rc.choice.zoneMarked("us-east-1a"), "both marked for the rest of the run")
}

// fullSubnetBatch launches every claim of a batch from the first override whose subnet is not full and
// answers overrides in full subnets with InsufficientFreeAddressesInSubnet.
type fullSubnetBatch struct {
	full     map[string]bool
	requests []instance.BatchRequest
}

func (f *fullSubnetBatch) LaunchBatch(_ context.Context, req instance.BatchRequest) (instance.BatchResult, error) {
	f.requests = append(f.requests, req)
	ice := &instance.InsufficientCapacityError{}
	for _, o := range req.Overrides {
		if f.full[o.SubnetID] {
			if len(ice.Subnets) == 0 {
				ice.Codes = []string{instance.CodeInsufficientFreeAddresses}
				ice.Subnets = append(ice.Subnets, instance.ExhaustedSubnet{SubnetID: o.SubnetID, Zone: o.Zone})
			}
			continue
		}
		var res instance.BatchResult
		for i, c := range req.Claims {
			res.Assigned = append(res.Assigned, instance.Assignment{Claim: c, Instance: instance.Instance{ID: fmt.Sprintf("i-%d", i),
				InstanceType: o.InstanceType, Zone: o.Zone, CapacityType: req.CapacityType, SubnetID: o.SubnetID}})
		}
		return res, nil
	}
	return instance.BatchResult{}, ice
}

func TestABatchMovesToTheZonesNextSubnetAndReservesForEveryClaim(t *testing.T) {
	ctx := context.Background()
	store := newStateStore(t)
	m5 := instanceType("m5.xlarge", "amd64", 4, 0.192, "us-east-1a", "us-east-1b")
	rc := twoSubnetClass(newRunSubnets(nil), nil, m5)
	target := claimTarget{claim: scheduling.ClaimPlan{InstanceTypeOptions: []string{"m5.xlarge"}, Requirements: []scheduling.NodeSelectorRequirement{
		{Key: scheduling.LabelZone, Operator: scheduling.OpIn, Values: []string{"us-east-1a"}},
		{Key: scheduling.LabelCapacityType, Operator: scheduling.OpIn, Values: []string{"on-demand"}},
	}}, class: rc, launches: 2}
	plan, err := buildLaunchPlan(ctx, &fakeTemplates{}, target, instance.Request{Cluster: "demo", Claim: "batch-x", NodePool: "default", NodeClass: "default"})
	require.NoError(t, err)
	rc.choice.run.mu.Lock()
	assert.Equal(t, int64(220), rc.choice.run.used["subnet-a1"], "two claims of at least 110 pods each reserved in a1")
	rc.choice.run.mu.Unlock()

	ec2 := &fullSubnetBatch{full: map[string]bool{"subnet-a1": true}}
	out := LaunchBatchPlan(ctx, ec2, store, plan, "batch-x", []string{"default-aaaa1", "default-aaaa2"})
	require.NoError(t, out.Err)
	require.Len(t, out.Assigned, 2)
	assert.Equal(t, "subnet-a2", out.Assigned[0].Instance.SubnetID)
	assert.Equal(t, []instance.ExhaustedSubnet{{SubnetID: "subnet-a1", Zone: "us-east-1a"}}, out.ExhaustedSubnets)
	require.Len(t, ec2.requests, 2)
	assert.Equal(t, "subnet-a2", ec2.requests[1].Overrides[0].SubnetID)
	marked, err := store.UnavailableSubnets(ctx)
	require.NoError(t, err)
	require.Len(t, marked, 1)
	assert.Equal(t, "subnet-a1", marked[0].SubnetID)

	instances := []instance.Instance{out.Assigned[0].Instance, out.Assigned[1].Instance}
	plan.subnets.settle(instances, rc.podsOf, false)
	rc.choice.run.mu.Lock()
	defer rc.choice.run.mu.Unlock()
	assert.Equal(t, int64(0), rc.choice.run.used["subnet-a1"], "the full subnet's reservation was given back")
	assert.Equal(t, int64(220), rc.choice.run.used["subnet-a2"], "the two instances' pods count in the subnet they went into")
}
