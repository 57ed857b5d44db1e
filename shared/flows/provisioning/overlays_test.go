package provisioning

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/launchtemplate"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/nodeoverlay"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/core/settings"
)

const savingsPlanOverlay = `---
apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata: {name: savings-plan}
spec:
  requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [m5.xlarge]}]
  priceAdjustment: "-50%"
`

func withGate(t *testing.T, items []state.ConfigItem, on bool) []state.ConfigItem {
	t.Helper()
	s := settings.Default()
	s.FeatureGates.NodeOverlay = on
	it, err := state.SettingsItem(s)
	require.NoError(t, err)
	return append(items, it)
}

// A stored NodeOverlay reaches the run only with the NodeOverlay gate on; with it off, it is named in the
// run's problems instead of being silently ignored.
func TestReadConfigTakesOverlaysOnlyWithTheGate(t *testing.T) {
	items := storedConfig(t, poolAndClass+savingsPlanOverlay)
	cfg, problems, err := readConfig(context.Background(), fakeConfig{items: withGate(t, items, true)})
	require.NoError(t, err)
	assert.Empty(t, problems)
	require.Len(t, cfg.overlays, 1)
	assert.Equal(t, "savings-plan", cfg.overlays[0].Name)

	cfg, problems, err = readConfig(context.Background(), fakeConfig{items: withGate(t, items, false)})
	require.NoError(t, err)
	assert.Empty(t, cfg.overlays)
	assert.Equal(t, []string{"NodeOverlay savings-plan is not applied: the NodeOverlay feature gate is off"}, problems)
}

// withOverlays gives each pool its overlaid types and names the overlays in conflict.
func TestWithOverlaysPricesEachPoolAndNamesConflicts(t *testing.T) {
	m5, c5 := instanceType("m5.xlarge", "amd64", 4, 0.192, "us-east-1a"), instanceType("c5.xlarge", "amd64", 4, 0.17, "us-east-1a")
	pools := []scheduling.NodePool{{Name: "a", InstanceTypes: []*scheduling.InstanceType{m5, c5}}, {Name: "b", InstanceTypes: []*scheduling.InstanceType{m5, c5}}}
	sp := nodeoverlay.Overlay{Name: "sp", Weight: 1, Price: "-50%", Requirements: scheduling.NewRequirements(
		scheduling.MustRequirement(scheduling.LabelInstanceType, scheduling.OpIn, "m5.xlarge"),
		scheduling.MustRequirement(scheduling.LabelNodePool, scheduling.OpIn, "a"))}
	clash := nodeoverlay.Overlay{Name: "clash", Weight: 1, Price: "1"}
	got, problems := withOverlays(pools, []nodeoverlay.Overlay{sp, clash}, nil)
	require.Len(t, problems, 1)
	assert.Contains(t, problems[0], "NodeOverlay clash is not applied: it conflicts with NodeOverlay sp")
	assert.InDelta(t, 0.096, got[0].InstanceTypes[0].Offerings[0].Price, 1e-9)
	assert.Same(t, c5, got[0].InstanceTypes[1])
	assert.Same(t, m5, got[1].InstanceTypes[0], "pool b is not selected")
	assert.InDelta(t, 0.192, m5.Offerings[0].Price, 1e-9, "the class's catalog is not changed")
}

// A launch takes its offerings from the pool's overlaid types: the overrides carry the overlay's prices
// and come cheapest first at them.
func TestLaunchPlanUsesThePoolsOverlaidPrices(t *testing.T) {
	m5, c5 := instanceType("m5.xlarge", "amd64", 4, 0.192, "us-east-1a"), instanceType("c5.xlarge", "amd64", 4, 0.17, "us-east-1a")
	class := testClass(m5, c5)
	pools, _ := withOverlays([]scheduling.NodePool{{Name: "default", InstanceTypes: class.types}}, []nodeoverlay.Overlay{{
		Name: "sp", Price: "-50%", Requirements: scheduling.NewRequirements(scheduling.MustRequirement(scheduling.LabelInstanceType, scheduling.OpIn, "m5.xlarge"))}}, nil)
	target := claimTarget{
		claim: scheduling.ClaimPlan{NodePool: "default", InstanceTypeOptions: []string{"m5.xlarge", "c5.xlarge"}, PriceOverlayApplied: true},
		pool:  pools[0], class: class, cluster: launchtemplate.Cluster{Name: "demo"},
	}
	plan, err := buildLaunchPlan(context.Background(), &fakeTemplates{}, target, instance.Request{Claim: "default-abcde"})
	require.NoError(t, err)
	require.Len(t, plan.OnDemand, 2)
	assert.Equal(t, "m5.xlarge", plan.OnDemand[0].InstanceType, "cheapest at the overlay's price")
	assert.InDelta(t, 0.096, plan.OnDemand[0].Price, 1e-9)
	assert.Equal(t, "c5.xlarge", plan.OnDemand[1].InstanceType)
	assert.InDelta(t, 0.17, plan.OnDemand[1].Price, 1e-9)
}

// The claim record keeps whether an overlay priced or gave capacity to its options, for its Node's
// karpenter.sh/price-overlay-applied and karpenter.sh/capacity-overlay-applied annotations.
func TestPendingClaimRecordsAppliedOverlays(t *testing.T) {
	l := claimLaunch{target: claimTarget{class: testClass(), claim: scheduling.ClaimPlan{NodePool: "default",
		PriceOverlayApplied: true, CapacityOverlayApplied: true}}}
	c := l.pendingClaim("default-abcde", nil)
	assert.True(t, c.PriceOverlayApplied)
	assert.True(t, c.CapacityOverlayApplied)
	c = claimLaunch{target: claimTarget{class: testClass()}}.pendingClaim("default-fghij", nil)
	assert.False(t, c.PriceOverlayApplied)
	assert.False(t, c.CapacityOverlayApplied)
}

// A claim in flight looks like its type as the pool's NodeOverlays left it, so a pod waiting for the
// extended resource an overlay gives the type counts the claim as its node instead of launching another.
func TestInFlightClaimsHaveTheOverlaidCapacity(t *testing.T) {
	m5 := instanceType("m5.xlarge", "amd64", 4, 0.192, "us-east-1a")
	class := testClass(m5)
	pool := scheduling.NodePool{Name: "default", Labels: map[string]string{scheduling.LabelEC2NodeClass: "default"}, InstanceTypes: class.types}
	pools, _ := withOverlays([]scheduling.NodePool{pool}, []nodeoverlay.Overlay{{Name: "fpga", Capacity: map[string]int64{"example.com/fpga": 1}}}, nil)
	claims := []state.Claim{{Name: "launched", NodePool: "default", NodeClass: "default", Lifecycle: state.Launched,
		InstanceType: "m5.xlarge", Zone: "us-east-1a", CapacityType: "on-demand", ProviderID: "aws:///us-east-1a/i-1", InstanceID: "i-1"}}
	got := inFlightClaims(claims, joinedNodes{}, pools, map[string]*readyClass{"default": class})
	require.Len(t, got, 1)
	assert.Equal(t, int64(1), got[0].Allocatable.Extended["example.com/fpga"])

	got = inFlightClaims(claims, joinedNodes{}, []scheduling.NodePool{pool}, map[string]*readyClass{"default": class})
	require.Len(t, got, 1)
	assert.Zero(t, got[0].Allocatable.Extended["example.com/fpga"], "without the overlay the type has none")
}
