package nodeoverlay

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/core/scheduling"
)

const family = "karpenter.k8s.aws/instance-family"

// typeOf builds an instance type of a family with spot and on-demand offerings in zones a and b at price.
func typeOf(name, fam string, price float64) *scheduling.InstanceType {
	var offs []scheduling.Offering
	for _, z := range []string{"us-east-1a", "us-east-1b"} {
		offs = append(offs,
			scheduling.Offering{Zone: z, ZoneID: z + "-id", CapacityType: scheduling.CapacityTypeOnDemand, Price: price, Available: true},
			scheduling.Offering{Zone: z, ZoneID: z + "-id", CapacityType: scheduling.CapacityTypeSpot, Price: price / 2, Available: true})
	}
	res := scheduling.Resources{CPU: 2000, Memory: 8 << 30, Pods: 29}
	return scheduling.NewInstanceType(name, map[string]string{family: fam}, res, res, offs)
}

func overlay(t *testing.T, name string, weight int32, price string, reqs ...*scheduling.Requirement) Overlay {
	t.Helper()
	return Overlay{Name: name, Weight: weight, Price: price, Requirements: scheduling.NewRequirements(reqs...)}
}

func in(key string, values ...string) *scheduling.Requirement {
	return scheduling.MustRequirement(key, scheduling.OpIn, values...)
}

func prices(it *scheduling.InstanceType) []float64 {
	out := make([]float64, len(it.Offerings))
	for i, o := range it.Offerings {
		out[i] = o.Price
	}
	return out
}

func onePool(types ...*scheduling.InstanceType) []Pool {
	return []Pool{{Name: "default", Labels: map[string]string{"team": "a"}, Types: types}}
}

func TestApplyAdjustsTheSelectedTypesOnly(t *testing.T) {
	m5, c5 := typeOf("m5.large", "m5", 0.096), typeOf("c5.large", "c5", 0.085)
	res := Apply([]Overlay{overlay(t, "sp", 1, "-30%", in(family, "m5"))}, onePool(m5, c5))
	require.Empty(t, res.Conflicts)
	got := res.Types["default"]
	require.Len(t, got, 2)
	assert.InDeltaSlice(t, []float64{0.0672, 0.0336, 0.0672, 0.0336}, prices(got[0]), 1e-9)
	assert.True(t, got[0].PriceOverlaid())
	assert.Same(t, c5, got[1], "an unselected type is shared, not copied")
	assert.False(t, got[1].PriceOverlaid())
	assert.InDeltaSlice(t, []float64{0.096, 0.048, 0.096, 0.048}, prices(m5), 1e-9, "the catalog's type is not changed")
	assert.False(t, m5.PriceOverlaid())
}

func TestApplySelectsOfferingsByCapacityTypeZoneAndZoneID(t *testing.T) {
	m5 := typeOf("m5.large", "m5", 1)
	res := Apply([]Overlay{overlay(t, "od", 1, "0.5", in(scheduling.LabelCapacityType, "on-demand"))}, onePool(m5))
	assert.Equal(t, []float64{0.5, 0.5, 0.5, 0.5}, prices(res.Types["default"][0]))
	assert.Equal(t, []bool{true, false, true, false}, overlaid(res.Types["default"][0]))

	res = Apply([]Overlay{overlay(t, "zone-b", 1, "+1", in(scheduling.LabelZone, "us-east-1b"))}, onePool(m5))
	assert.Equal(t, []float64{1, 0.5, 2, 1.5}, prices(res.Types["default"][0]))

	res = Apply([]Overlay{overlay(t, "zone-id-a", 1, "+1", in(scheduling.LabelZoneID, "us-east-1a-id"))}, onePool(m5))
	assert.Equal(t, []float64{2, 1.5, 1, 0.5}, prices(res.Types["default"][0]))

	res = Apply([]Overlay{overlay(t, "reserved-only", 1, "0", scheduling.MustRequirement(scheduling.LabelCapacityReservationID, scheduling.OpExists))}, onePool(m5))
	assert.Same(t, m5, res.Types["default"][0], "no offering of a reservation: nothing selected")
}

func overlaid(it *scheduling.InstanceType) []bool {
	out := make([]bool, len(it.Offerings))
	for i, o := range it.Offerings {
		out[i] = o.PriceOverlaid
	}
	return out
}

func TestApplySelectsOnPoolNameAndTemplateLabels(t *testing.T) {
	pools := []Pool{
		{Name: "a", Labels: map[string]string{"team": "x"}, Types: []*scheduling.InstanceType{typeOf("m5.large", "m5", 1)}},
		{Name: "b", Labels: map[string]string{"team": "y"}, Types: []*scheduling.InstanceType{typeOf("m5.large", "m5", 1)}},
	}
	res := Apply([]Overlay{overlay(t, "team-x", 1, "2", in("team", "x"))}, pools)
	assert.Equal(t, 2.0, res.Types["a"][0].Offerings[0].Price)
	assert.Equal(t, 1.0, res.Types["b"][0].Offerings[0].Price)

	res = Apply([]Overlay{overlay(t, "pool-b", 1, "3", in(scheduling.LabelNodePool, "b"))}, pools)
	assert.Equal(t, 1.0, res.Types["a"][0].Offerings[0].Price)
	assert.Equal(t, 3.0, res.Types["b"][0].Offerings[0].Price)

	res = Apply([]Overlay{overlay(t, "undefined-label", 1, "3", scheduling.MustRequirement("example.com/gpu-vendor", scheduling.OpExists))}, pools)
	assert.Equal(t, 1.0, res.Types["a"][0].Offerings[0].Price, "a label neither the type nor the pool defines selects nothing")
	res = Apply([]Overlay{overlay(t, "absent-label", 1, "3", scheduling.MustRequirement("example.com/gpu-vendor", scheduling.OpDoesNotExist))}, pools)
	assert.Equal(t, 3.0, res.Types["a"][0].Offerings[0].Price, "DoesNotExist of an undefined label selects")
}

func TestApplyHighestWeightWinsPerOffering(t *testing.T) {
	m5 := typeOf("m5.large", "m5", 1)
	res := Apply([]Overlay{
		overlay(t, "all", 1, "+1"),
		overlay(t, "spot", 10, "0.1", in(scheduling.LabelCapacityType, "spot")),
	}, onePool(m5))
	require.Empty(t, res.Conflicts)
	assert.Equal(t, []float64{2, 0.1, 2, 0.1}, prices(res.Types["default"][0]), "spot from the heavier overlay, on-demand from the other")
}

func TestApplyEqualWeightsConflict(t *testing.T) {
	m5, c5 := typeOf("m5.large", "m5", 1), typeOf("c5.large", "c5", 1)
	res := Apply([]Overlay{
		overlay(t, "alpha", 5, "0.2", in(family, "m5")),
		overlay(t, "zulu", 5, "0.3"),
	}, onePool(m5, c5))
	require.Len(t, res.Conflicts, 1)
	c := res.Conflicts[0]
	assert.Equal(t, "alpha", c.Overlay, "Z to A: zulu is taken first, alpha second")
	assert.Equal(t, "zulu", c.With)
	assert.Equal(t, "m5.large", c.InstanceType)
	assert.Contains(t, c.String(), "NodeOverlay alpha is not applied: it conflicts with NodeOverlay zulu (both weight 5")
	assert.Equal(t, []float64{0.3, 0.3, 0.3, 0.3}, prices(res.Types["default"][0]), "alpha is applied nowhere")

	res = Apply([]Overlay{
		overlay(t, "alpha", 5, "0.2", in(family, "m5")),
		overlay(t, "zulu", 5, "0.3", in(family, "c5")),
	}, onePool(m5, c5))
	assert.Empty(t, res.Conflicts, "equal weights on different offerings do not conflict")
	assert.Equal(t, 0.2, res.Types["default"][0].Offerings[0].Price)
	assert.Equal(t, 0.3, res.Types["default"][1].Offerings[0].Price)
}

func TestApplyConflictInOnePoolDropsTheOverlayEverywhere(t *testing.T) {
	pools := []Pool{
		{Name: "a", Types: []*scheduling.InstanceType{typeOf("m5.large", "m5", 1)}},
		{Name: "b", Types: []*scheduling.InstanceType{typeOf("m5.large", "m5", 1)}},
	}
	res := Apply([]Overlay{
		overlay(t, "b-only", 3, "0.5", in(scheduling.LabelNodePool, "b")),
		overlay(t, "all", 3, "0.1"),
	}, pools)
	// "b-only" sorts before "all" (Z to A), so "all" conflicts in pool b and is not applied in a either.
	require.Len(t, res.Conflicts, 1)
	assert.Equal(t, "all", res.Conflicts[0].Overlay)
	assert.Equal(t, 1.0, res.Types["a"][0].Offerings[0].Price)
	assert.Equal(t, 0.5, res.Types["b"][0].Offerings[0].Price)
}

func TestApplyCapacity(t *testing.T) {
	m5 := typeOf("m5.large", "m5", 1)
	m5.Capacity.Extended = map[string]int64{"example.com/other": 1}
	fpga := Overlay{Name: "fpga", Weight: 10, Requirements: scheduling.NewRequirements(in(family, "m5")),
		Capacity: map[string]int64{"example.com/fpga": 2}}
	lighter := Overlay{Name: "lighter", Weight: 1, Capacity: map[string]int64{"example.com/fpga": 9, "example.com/nic": 4}}
	res := Apply([]Overlay{lighter, fpga}, onePool(m5))
	require.Empty(t, res.Conflicts)
	got := res.Types["default"][0]
	assert.Equal(t, map[string]int64{"example.com/other": 1, "example.com/fpga": 2, "example.com/nic": 4}, got.Capacity.Extended,
		"the heavier overlay's fpga wins; the lighter one adds what the heavier left unset")
	assert.Equal(t, map[string]int64{"example.com/fpga": 2, "example.com/nic": 4}, got.Allocatable.Extended)
	assert.True(t, got.CapacityOverlaid)
	assert.False(t, got.PriceOverlaid(), "a capacity overlay leaves prices alone")
	assert.Equal(t, map[string]int64{"example.com/other": 1}, m5.Capacity.Extended, "the catalog's type is not changed")
	assert.False(t, m5.CapacityOverlaid)

	same := Overlay{Name: "same", Weight: 10, Capacity: map[string]int64{"example.com/fpga": 1}}
	res = Apply([]Overlay{fpga, same}, onePool(m5))
	require.Len(t, res.Conflicts, 1)
	assert.Equal(t, "fpga", res.Conflicts[0].Overlay, "same weight, same resource: taken second (Z to A) it conflicts")
	assert.Equal(t, "the capacity example.com/fpga", res.Conflicts[0].What)
}

func TestApplyWithoutOverlaysSharesThePoolsTypes(t *testing.T) {
	types := []*scheduling.InstanceType{typeOf("m5.large", "m5", 1)}
	res := Apply(nil, onePool(types...))
	assert.Same(t, types[0], res.Types["default"][0])
}
