package provisioning

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/nodeclass"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// A class's instance types carry the run's region and their offerings the zone ids of the class's
// subnets; a reserved offering knows its zone's id too.
func TestPreparedClassTypesCarryRegionAndZoneIDs(t *testing.T) {
	cfg, _, err := readConfig(context.Background(), fakeConfig{items: storedConfig(t, poolAndClass)})
	require.NoError(t, err)
	cfg.region = "us-east-1"
	reserved := nodeclass.CapacityReservation{Available: 1}
	reserved.ID, reserved.InstanceType, reserved.AvailabilityZone = "cr-0123456789abcdef0", "m5.xlarge", "us-east-1a"
	r := &fakeResolver{res: map[string]nodeclass.Resolution{"default": {Ready: true,
		Subnets:              []nodeclass.Subnet{{ID: "subnet-a", Zone: "us-east-1a", ZoneID: "use1-az1"}},
		CapacityReservations: []nodeclass.CapacityReservation{reserved}}}}
	classes, _, problems, _, _ := prepareClasses(context.Background(), r, oneTypeCatalog(), flatPrices{"m5.xlarge": 0.192}, cfg, "1.34", nil, subnetView{})
	require.Empty(t, problems)
	it := classes["default"].byName["m5.xlarge"]
	require.NotNil(t, it)
	require.Len(t, it.Offerings, 3, "reserved, on-demand and spot in us-east-1a")
	for _, o := range it.Offerings {
		assert.Equal(t, "use1-az1", o.ZoneID, "%s offering", o.CapacityType)
	}
	labels := it.Requirements.Labels()
	assert.Equal(t, "us-east-1", labels[scheduling.LabelRegion])
	assert.Equal(t, "use1-az1", labels[scheduling.LabelZoneID])
	assert.NotContains(t, labels, scheduling.LabelCapacityReservationID, "a type with a reserved offering stamps no reservation on every node")
}

// The launch plan keeps the overrides in the zone ids the claim allows; where zone ids are unknown it
// keeps every zone, as before.
func TestBuildLaunchPlanFollowsZoneID(t *testing.T) {
	claim := scheduling.ClaimPlan{InstanceTypeOptions: []string{"m5.xlarge"}, Requirements: []scheduling.NodeSelectorRequirement{
		{Key: scheduling.LabelZoneID, Operator: scheduling.OpIn, Values: []string{"use1-az2"}},
		{Key: scheduling.LabelCapacityType, Operator: scheduling.OpIn, Values: []string{"on-demand"}},
	}}
	class := testClass(instanceType("m5.xlarge", "amd64", 4, 0.192, "us-east-1a", "us-east-1b"))
	class.subnets = map[string]nodeclass.Subnet{"us-east-1a": {ID: "subnet-a", Zone: "us-east-1a", ZoneID: "use1-az1"},
		"us-east-1b": {ID: "subnet-b", Zone: "us-east-1b", ZoneID: "use1-az2"}}
	plan, err := buildLaunchPlan(context.Background(), &fakeTemplates{}, claimTarget{claim: claim, class: class}, instance.Request{})
	require.NoError(t, err)
	require.Len(t, plan.OnDemand, 1)
	assert.Equal(t, "us-east-1b", plan.OnDemand[0].Zone)
	assert.Equal(t, "subnet-b", plan.OnDemand[0].SubnetID)

	unknown := testClass(instanceType("m5.xlarge", "amd64", 4, 0.192, "us-east-1a", "us-east-1b"))
	plan, err = buildLaunchPlan(context.Background(), &fakeTemplates{}, claimTarget{claim: claim, class: unknown}, instance.Request{})
	require.NoError(t, err)
	assert.Len(t, plan.OnDemand, 2, "zone ids unknown: no zone is ruled out")
}

// A node of an AWS type lacking hardware gets no label for it, a type that is not flex says so, and a
// type with a reserved offering launched as spot carries no reservation.
func TestLaunchedLabelsOfATypeLackingHardware(t *testing.T) {
	info := scheduling.InstanceInfo{Name: "c6g.large", VCPUs: 2, MemoryMiB: 4096, Architecture: "arm64", CPUManufacturer: "aws",
		MaxENIs: 3, IPv4PerENI: 10, Hypervisor: "nitro"}
	offerings := []scheduling.Offering{
		{Zone: "us-east-1a", ZoneID: "use1-az1", CapacityType: scheduling.CapacityTypeSpot, Price: 0.03, Available: true},
		{Zone: "us-east-1a", ZoneID: "use1-az1", CapacityType: scheduling.CapacityTypeReserved, Price: 0, Available: true,
			ReservationID: "cr-1", ReservationCapacity: 1},
	}
	it, err := scheduling.NewAWSInstanceType(info, scheduling.NodeClassConfig{Region: "us-east-1"}, offerings)
	require.NoError(t, err)
	claim, err := claimLabels(scheduling.NodePool{Name: "default"}, "default", nil)
	require.NoError(t, err)
	got := launchedLabels(claim, it, instance.Instance{InstanceType: "c6g.large", Zone: "us-east-1a"}, "spot", "use1-az1", "")
	for _, key := range []string{scheduling.LabelInstanceGPUName, scheduling.LabelInstanceGPUCount, scheduling.LabelInstanceLocalNVMe,
		scheduling.LabelInstanceAcceleratorName, scheduling.LabelWindowsBuild, scheduling.LabelCapacityReservationID,
		scheduling.LabelCapacityReservationType, scheduling.LabelCapacityReservationInterrupt} {
		assert.NotContains(t, got, key)
	}
	for k, v := range map[string]string{scheduling.LabelInstanceCapabilityFlex: "false", scheduling.LabelRegion: "us-east-1",
		scheduling.LabelZoneID: "use1-az1", scheduling.LabelCapacityType: "spot", scheduling.LabelInstanceFamily: "c6g",
		scheduling.LabelInstanceCPUManufacturer: "aws"} {
		assert.Equal(t, v, got[k], k)
	}
}
