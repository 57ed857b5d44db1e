package provisioning

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

func TestClaimLabels(t *testing.T) {
	pool := scheduling.NodePool{Name: "teams", Labels: map[string]string{"tier": "web", scheduling.LabelEC2NodeClass: "default"}}
	got, err := claimLabels(pool, "default", []scheduling.NodeSelectorRequirement{
		{Key: "team", Operator: scheduling.OpIn, Values: []string{"a"}},
		{Key: "tier", Operator: scheduling.OpIn, Values: []string{"batch"}},
		{Key: "stage", Operator: scheduling.OpIn, Values: []string{"dev", "prod"}},
		{Key: "owner", Operator: scheduling.OpExists},
		{Key: scheduling.LabelZone, Operator: scheduling.OpIn, Values: []string{"us-east-1b"}},
		{Key: scheduling.LabelInstanceType, Operator: scheduling.OpIn, Values: []string{"m5.large", "c5.large"}},
		{Key: scheduling.LabelHostname, Operator: scheduling.OpIn, Values: []string{"pinned"}},
		{Key: "karpenter.sh/custom", Operator: scheduling.OpIn, Values: []string{"x"}},
	})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"team": "a", "tier": "web", scheduling.LabelZone: "us-east-1b",
		scheduling.LabelNodePool: "teams", scheduling.LabelEC2NodeClass: "default"}, got,
		"single values only; template labels win; no hostname or restricted karpenter.sh keys")

	_, err = claimLabels(pool, "default", []scheduling.NodeSelectorRequirement{{Key: "n", Operator: scheduling.OpGt, Values: []string{"x"}}})
	assert.ErrorContains(t, err, "claim requirements")
}

func TestLaunchedLabels(t *testing.T) {
	it := scheduling.NewInstanceType("m5.xlarge", map[string]string{scheduling.LabelInstanceFamily: "m5",
		scheduling.LabelInstanceCPU: "4", "team": "from-type"}, scheduling.Resources{}, scheduling.Resources{},
		[]scheduling.Offering{{Zone: "us-east-1a", CapacityType: "reserved"}})
	claim := map[string]string{"team": "a", scheduling.LabelNodePool: "teams"}
	inst := instance.Instance{ID: "i-1", InstanceType: "m5.xlarge", Zone: "us-east-1a", CapacityReservationID: "cr-1"}

	got := launchedLabels(claim, it, inst, "reserved", "use1-az1", "capacity-block")
	assert.Equal(t, map[string]string{"team": "a", scheduling.LabelNodePool: "teams", scheduling.LabelInstanceFamily: "m5",
		scheduling.LabelInstanceCPU: "4", scheduling.LabelInstanceType: "m5.xlarge", scheduling.LabelZone: "us-east-1a",
		scheduling.LabelZoneID: "use1-az1", scheduling.LabelCapacityType: "reserved",
		scheduling.LabelCapacityReservationID: "cr-1", scheduling.LabelCapacityReservationType: "capacity-block",
		scheduling.LabelCapacityReservationInterrupt: "false", scheduling.LabelInstanceCapabilityFlex: "false"}, got,
		"the claim's labels win over the instance type's; the launch settles type, zone and capacity; a type that is not flex says so, as in Karpenter")
	assert.Equal(t, "teams", claim[scheduling.LabelNodePool], "the claim's map is not changed")
	assert.NotContains(t, claim, scheduling.LabelInstanceFamily)

	inst.InterruptibleReservation = true
	assert.Equal(t, "true", launchedLabels(claim, it, inst, "reserved", "use1-az1", "default")[scheduling.LabelCapacityReservationInterrupt],
		"an interruptible reservation's node says so")

	unknown := launchedLabels(claim, nil, instance.Instance{InstanceType: "x9.large", Zone: "us-east-1b"}, "spot", "", "default")
	assert.Equal(t, map[string]string{"team": "a", scheduling.LabelNodePool: "teams", scheduling.LabelInstanceType: "x9.large",
		scheduling.LabelZone: "us-east-1b", scheduling.LabelCapacityType: "spot"}, unknown,
		"a type missing from the catalog still gets what the launch knows; no reservation labels without a reservation")
}

func TestInFlightClaimsUseTheRecordedLabels(t *testing.T) {
	classes := map[string]*readyClass{"default": testClass(instanceType("m5.xlarge", "amd64", 4, 0.192, "us-east-1a"))}
	pools := []scheduling.NodePool{{Name: "teams", Requirements: []scheduling.NodeSelectorRequirement{{Key: "team", Operator: scheduling.OpExists}}}}
	claims := []state.Claim{
		{Name: "pending", NodePool: "teams", NodeClass: "default", Lifecycle: state.Pending, InstanceTypes: []string{"m5.xlarge"},
			Labels: map[string]string{"team": "a"}},
		{Name: "launched", NodePool: "teams", NodeClass: "default", Lifecycle: state.Launched, InstanceType: "m5.xlarge",
			Zone: "us-east-1a", CapacityType: "spot", Labels: map[string]string{"team": "b", scheduling.LabelZoneID: "use1-az1"}},
	}
	got := inFlightClaims(claims, joinedNodes{}, pools, classes)
	require.Len(t, got, 2)
	assert.Equal(t, "a", got[0].Labels["team"], "a claim not launched yet carries its narrowed labels")
	assert.Equal(t, "m5.xlarge", got[0].Labels[scheduling.LabelInstanceType])
	assert.Equal(t, "b", got[1].Labels["team"])
	assert.Equal(t, "use1-az1", got[1].Labels[scheduling.LabelZoneID])
	assert.Equal(t, "amd64", got[1].Labels[scheduling.LabelArch])
}
