package scheduling_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/core/scheduling"
	. "github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
)

const (
	zoneA, zoneB = "us-west-2a", "us-west-2b"
	reservedM5   = 0.096 / 1e7 // what instancetypes prices an m5.large reservation at
)

// reservedType is a 2-CPU type; every pod of reservationPods fills one node of it.
func reservedType(name string, offerings ...scheduling.Offering) *scheduling.InstanceType {
	capacity := scheduling.Resources{CPU: 2000, Memory: 8 << 30, Pods: 29}
	allocatable := scheduling.Resources{CPU: 1930, Memory: 7 << 30, Pods: 29}
	return scheduling.NewInstanceType(name, map[string]string{scheduling.LabelArch: "amd64", scheduling.LabelOS: "linux"}, capacity, allocatable, offerings)
}

func spot(zone string, price float64) scheduling.Offering {
	return scheduling.Offering{Zone: zone, CapacityType: scheduling.CapacityTypeSpot, Price: price, Available: true}
}

func onDemand(zone string, price float64) scheduling.Offering {
	return scheduling.Offering{Zone: zone, CapacityType: scheduling.CapacityTypeOnDemand, Price: price, Available: true}
}

func reservation(id, zone string, left int) scheduling.Offering {
	return scheduling.Offering{Zone: zone, CapacityType: scheduling.CapacityTypeReserved, Price: reservedM5, Available: true,
		ReservationID: id, ReservationCapacity: left}
}

// launched is what a test expects of one claim: pool, type, zone, capacity type, reservation and price.
type launched struct {
	pool, instanceType, zone, capacityType, reservation string
	price                                               float64
}

func TestSolveCountsReservations(t *testing.T) {
	m5 := func(offerings ...scheduling.Offering) []*scheduling.InstanceType {
		return []*scheduling.InstanceType{reservedType("m5.large", append([]scheduling.Offering{spot(zoneA, 0.04), onDemand(zoneA, 0.096)}, offerings...)...)}
	}
	reservedOnly := NodePool("reserved", Weight(10), Requirement(scheduling.LabelCapacityType, scheduling.OpIn, scheduling.CapacityTypeReserved))
	r := func(zone, id string) launched {
		return launched{pool: "default", instanceType: "m5.large", zone: zone, capacityType: scheduling.CapacityTypeReserved, reservation: id, price: reservedM5}
	}
	s := launched{pool: "default", instanceType: "m5.large", zone: zoneA, capacityType: scheduling.CapacityTypeSpot, price: 0.04}
	inPool := func(l launched, pool string) launched { l.pool = pool; return l }
	cases := []struct {
		name     string
		types    []*scheduling.InstanceType
		pools    []scheduling.NodePool
		inFlight []scheduling.InFlightClaim
		pods     int
		want     []launched
		// failed pods must cite a used-up reservation; why lists substrings of the last claim's Why.
		failed int
		why    []string
	}{
		{
			name: "reservation of 2 and five one-node pods", types: m5(reservation("cr-1", zoneA, 2)), pods: 5,
			want: []launched{r(zoneA, "cr-1"), r(zoneA, "cr-1"), s, s, s},
			why:  []string{"capacity reservation cr-1 is used up: new claims of this solve take the 2 instance(s) it had left"},
		},
		{
			name: "reservation exactly used up", types: m5(reservation("cr-1", zoneA, 3)), pods: 3,
			want: []launched{r(zoneA, "cr-1"), r(zoneA, "cr-1"), r(zoneA, "cr-1")},
			why:  []string{"one of the instances capacity reservation cr-1 takes"},
		},
		{
			name: "reservation with none left is not used", types: m5(reservation("cr-1", zoneA, 0)), pods: 2,
			want: []launched{s, s},
			why:  []string{"capacity reservation cr-1 is full"},
		},
		{
			name:  "two reservations of one type in two zones",
			types: m5(spot(zoneB, 0.045), reservation("cr-b", zoneB, 1), reservation("cr-a", zoneA, 1)), pods: 4,
			want: []launched{r(zoneA, "cr-a"), r(zoneB, "cr-b"), s, s},
		},
		{
			name: "reserved-only nodepool gets what the reservation takes", types: m5(reservation("cr-1", zoneA, 2)),
			pools: []scheduling.NodePool{reservedOnly}, pods: 5,
			want:   []launched{inPool(r(zoneA, "cr-1"), "reserved"), inPool(r(zoneA, "cr-1"), "reserved")},
			failed: 3,
		},
		{
			name: "a lighter nodepool takes the pods a used-up reservation leaves", types: m5(reservation("cr-1", zoneA, 2)),
			pools: []scheduling.NodePool{reservedOnly, NodePool("default")}, pods: 4,
			want: []launched{inPool(r(zoneA, "cr-1"), "reserved"), inPool(r(zoneA, "cr-1"), "reserved"), s, s},
		},
		{
			name: "another type once the reservation is used up",
			types: []*scheduling.InstanceType{
				reservedType("m5.large", onDemand(zoneA, 0.096), reservation("cr-1", zoneA, 1)),
				reservedType("c5.large", spot(zoneA, 0.035), onDemand(zoneA, 0.085)),
			},
			pods: 3,
			want: []launched{r(zoneA, "cr-1"),
				{pool: "default", instanceType: "c5.large", zone: zoneA, capacityType: scheduling.CapacityTypeSpot, price: 0.035},
				{pool: "default", instanceType: "c5.large", zone: zoneA, capacityType: scheduling.CapacityTypeSpot, price: 0.035}},
		},
		{
			name: "an in-flight claim not launched yet holds an instance", types: m5(reservation("cr-1", zoneA, 2)), pods: 3,
			inFlight: []scheduling.InFlightClaim{{Name: "default-old", NodePool: "default", PendingReservationID: "cr-1",
				Allocatable: scheduling.Resources{CPU: 100, Memory: 1 << 30, Pods: 10}}},
			want: []launched{r(zoneA, "cr-1"), s, s},
			why:  []string{"capacity reservation cr-1 is used up: new claims of this solve take the 1 instance(s) it had left, in-flight claims not launched yet hold 1"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pools := tc.pools
			if pools == nil {
				pools = []scheduling.NodePool{NodePool("default")}
			}
			pods := Pods(tc.pods, PodOptions{Name: "web", CPU: "1500m", Memory: "1Gi"})
			in := scheduling.Input{Pods: pods, NodePools: pools, InstanceTypes: tc.types, InFlight: tc.inFlight}
			plan, err := scheduling.Solve(in)
			require.NoError(t, err)

			var got []launched
			total := 0.0
			for _, c := range plan.NewClaims {
				got = append(got, launched{pool: c.NodePool, instanceType: c.InstanceType, zone: c.Zone, capacityType: c.CapacityType,
					reservation: c.ReservationID, price: c.Price})
				total += c.Price
				reqs, err := scheduling.RequirementsFromSpecs(c.Requirements)
				require.NoError(t, err)
				// A launch may try the claim's own reservation and no other.
				for _, it := range tc.types {
					if !slices.Contains(c.InstanceTypeOptions, it.Name) {
						continue
					}
					for _, o := range it.Offerings {
						if o.CapacityType == scheduling.CapacityTypeReserved && reqs.Get(scheduling.LabelCapacityType).Has(o.CapacityType) &&
							reqs.Get(scheduling.LabelZone).Has(o.Zone) && reqs.Get(scheduling.LabelCapacityReservationID).Has(o.ReservationID) && o.ReservationCapacity > 0 {
							assert.Equal(t, c.ReservationID, o.ReservationID, "%s may launch into %s: %v", c.Name, o.ReservationID, c.Requirements)
						}
					}
				}
			}
			require.Len(t, got, len(tc.want))
			for i := range tc.want {
				assert.Equal(t, tc.want[i].pool, got[i].pool, "claim %d pool", i)
				assert.Equal(t, tc.want[i].instanceType, got[i].instanceType, "claim %d type", i)
				assert.Equal(t, tc.want[i].zone, got[i].zone, "claim %d zone", i)
				assert.Equal(t, tc.want[i].capacityType, got[i].capacityType, "claim %d capacity type", i)
				assert.Equal(t, tc.want[i].reservation, got[i].reservation, "claim %d reservation", i)
				assert.InDelta(t, tc.want[i].price, got[i].price, 1e-12, "claim %d price", i)
			}
			assert.InDelta(t, total, plan.TotalPrice, 1e-12)
			for _, w := range tc.why {
				assert.Contains(t, plan.NewClaims[len(plan.NewClaims)-1].Why, w)
			}
			require.Len(t, plan.Unschedulable, tc.failed)
			for _, f := range plan.Unschedulable {
				require.NotEmpty(t, f.Rejections)
				last := f.Rejections[len(f.Rejections)-1]
				assert.Equal(t, scheduling.ConstraintReservation, last.Constraint, f.Reason)
				assert.Contains(t, f.Reason, "nodepool reserved: capacity reservation cr-1 is used up: new claims of this solve take the 2 instance(s) it had left")
			}

			// Same input in another order, same plan.
			again := in
			again.Pods = slices.Clone(pods)
			slices.Reverse(again.Pods)
			replan, err := scheduling.Solve(again)
			require.NoError(t, err)
			a, err := json.Marshal(plan)
			require.NoError(t, err)
			b, err := json.Marshal(replan)
			require.NoError(t, err)
			assert.JSONEq(t, string(a), string(b))
		})
	}
}

// TestReservedClaimKeepsToItsReservation checks that a claim holding a reservation is filled only with
// pods its reserved type holds, and that the pods that do not fit go elsewhere.
func TestReservedClaimKeepsToItsReservation(t *testing.T) {
	types := []*scheduling.InstanceType{
		reservedType("m5.large", spot(zoneA, 0.04), onDemand(zoneA, 0.096), reservation("cr-1", zoneA, 1)),
		scheduling.NewInstanceType("m5.2xlarge", map[string]string{scheduling.LabelArch: "amd64", scheduling.LabelOS: "linux"},
			scheduling.Resources{CPU: 8000, Memory: 32 << 30, Pods: 58}, scheduling.Resources{CPU: 7910, Memory: 30 << 30, Pods: 58},
			[]scheduling.Offering{spot(zoneA, 0.16), onDemand(zoneA, 0.384)}),
	}
	pods := Pods(6, PodOptions{Name: "api", CPU: "900m", Memory: "1Gi"})
	plan, err := scheduling.Solve(scheduling.Input{Pods: pods, NodePools: []scheduling.NodePool{NodePool("default")}, InstanceTypes: types})
	require.NoError(t, err)
	require.Empty(t, plan.Unschedulable)
	reserved := 0
	for _, c := range plan.NewClaims {
		if c.ReservationID == "" {
			continue
		}
		reserved++
		assert.Equal(t, "m5.large", c.InstanceType)
		assert.Len(t, c.Pods, 2, "two 900m pods fill the reserved m5.large")
	}
	assert.Equal(t, 1, reserved, "one instance left in the reservation")
	assert.Equal(t, len(pods), countPods(plan))
}

func countPods(plan *scheduling.Plan) int {
	n := 0
	for _, c := range plan.NewClaims {
		n += len(c.Pods)
	}
	return n
}

// TestReservationInAPoolWithMinValues checks that a claim in a reservation keeps the options minValues
// needs, and still launches into its reservation.
func TestReservationInAPoolWithMinValues(t *testing.T) {
	types := []*scheduling.InstanceType{
		reservedType("m5.large", spot(zoneA, 0.04), reservation("cr-1", zoneA, 1)),
		reservedType("c5.large", spot(zoneA, 0.035)),
	}
	pool := NodePool("default", MinValues(scheduling.LabelInstanceType, scheduling.OpExists, 2))
	plan, err := scheduling.Solve(scheduling.Input{Pods: Pods(2, PodOptions{Name: "web", CPU: "1500m", Memory: "1Gi"}),
		NodePools: []scheduling.NodePool{pool}, InstanceTypes: types})
	require.NoError(t, err)
	require.Empty(t, plan.Unschedulable)
	require.Len(t, plan.NewClaims, 2)
	assert.Equal(t, "cr-1", plan.NewClaims[0].ReservationID)
	assert.Equal(t, []string{"m5.large", "c5.large"}, plan.NewClaims[0].InstanceTypeOptions, "minValues keeps two types")
	assert.Equal(t, scheduling.CapacityTypeSpot, plan.NewClaims[1].CapacityType)
	assert.Equal(t, "c5.large", plan.NewClaims[1].InstanceType)
}

// TestPodRequiringAReservationNeverTakesSpotOrOnDemand checks that a pod requiring a reservation label
// (capacity-reservation-id, -type or -interruptible) is never placed on a spot or on-demand offering of
// a type that also has a reserved one: those offerings carry the labels DoesNotExist, as in Karpenter.
func TestPodRequiringAReservationNeverTakesSpotOrOnDemand(t *testing.T) {
	interruptible := reservation("cr-1", zoneA, 1)
	interruptible.Interruptible = true
	types := []*scheduling.InstanceType{reservedType("m5.large", spot(zoneA, 0.04), onDemand(zoneA, 0.096), interruptible)}
	for name, req := range map[string][]string{
		"id exists":          {scheduling.LabelCapacityReservationID, string(scheduling.OpExists)},
		"type default":       {scheduling.LabelCapacityReservationType, string(scheduling.OpIn), scheduling.ReservationTypeDefault},
		"interruptible true": {scheduling.LabelCapacityReservationInterrupt, string(scheduling.OpIn), "true"},
	} {
		t.Run(name, func(t *testing.T) {
			pods := Pods(2, PodOptions{Name: "web", CPU: "1500m", Memory: "1Gi", NodeRequirements: []corev1.NodeSelectorRequirement{
				{Key: req[0], Operator: corev1.NodeSelectorOperator(req[1]), Values: req[2:]}}})
			plan, err := scheduling.Solve(scheduling.Input{Pods: pods, NodePools: []scheduling.NodePool{NodePool("default")}, InstanceTypes: types})
			require.NoError(t, err)
			require.Len(t, plan.NewClaims, 1, "the reservation takes one; the other pod must not go to spot")
			assert.Equal(t, "cr-1", plan.NewClaims[0].ReservationID)
			assert.Equal(t, scheduling.CapacityTypeReserved, plan.NewClaims[0].CapacityType)
			assert.Len(t, plan.Unschedulable, 1)
		})
	}
	t.Run("interruptible false refuses the interruptible reservation", func(t *testing.T) {
		pods := Pods(1, PodOptions{Name: "web", CPU: "1500m", Memory: "1Gi", NodeRequirements: []corev1.NodeSelectorRequirement{
			{Key: scheduling.LabelCapacityReservationInterrupt, Operator: corev1.NodeSelectorOpNotIn, Values: []string{"true"}}}})
		plan, err := scheduling.Solve(scheduling.Input{Pods: pods, NodePools: []scheduling.NodePool{NodePool("default")}, InstanceTypes: types})
		require.NoError(t, err)
		require.Len(t, plan.NewClaims, 1)
		assert.Equal(t, scheduling.CapacityTypeSpot, plan.NewClaims[0].CapacityType)
		assert.Empty(t, plan.NewClaims[0].ReservationID)
	})
}

// TestProvisioningWaitsForAUsedUpReservation checks Karpenter's provisioning rule (StrictReservations):
// a pod a higher-weight NodePool would put into a capacity reservation that this solve (or in-flight
// claims) used up goes to no lower-weight NodePool and is not relaxed; it waits for the next run.
// Disruption's simulations (StrictReservations off) still fall back.
func TestProvisioningWaitsForAUsedUpReservation(t *testing.T) {
	reservedOnly := NodePool("reserved", Weight(10), Requirement(scheduling.LabelCapacityType, scheduling.OpIn, scheduling.CapacityTypeReserved))
	pools := []scheduling.NodePool{reservedOnly, NodePool("default")}
	m5 := func(offerings ...scheduling.Offering) []*scheduling.InstanceType {
		return []*scheduling.InstanceType{reservedType("m5.large", append([]scheduling.Offering{spot(zoneA, 0.04), spot(zoneB, 0.04)}, offerings...)...)}
	}
	count := func(plan *scheduling.Plan) (reserved, other int) {
		for _, c := range plan.NewClaims {
			if c.ReservationID != "" {
				reserved++
			} else {
				other++
			}
		}
		return reserved, other
	}
	solve := func(t *testing.T, strict bool, types []*scheduling.InstanceType, inFlight []scheduling.InFlightClaim, pods ...*corev1.Pod) *scheduling.Plan {
		t.Helper()
		plan, err := scheduling.Solve(scheduling.Input{Pods: pods, NodePools: pools, InstanceTypes: types, InFlight: inFlight, StrictReservations: strict})
		require.NoError(t, err)
		return plan
	}
	web := PodOptions{Name: "web", CPU: "1500m", Memory: "1Gi"}

	t.Run("used up by this solve: no lower-weight nodepool takes the rest", func(t *testing.T) {
		plan := solve(t, true, m5(reservation("cr-1", zoneA, 2)), nil, Pods(4, web)...)
		reserved, other := count(plan)
		assert.Equal(t, 2, reserved)
		assert.Zero(t, other, "nodepool default must not take them in this run")
		require.Len(t, plan.Unschedulable, 2)
		for _, f := range plan.Unschedulable {
			assert.Contains(t, f.Reason, "nodepool reserved: capacity reservation cr-1 is used up")
			assert.Contains(t, f.Reason, "nodepool default: not tried: nodepool reserved (weight 10) would take the pod into a capacity reservation this run has used up")
		}

		plan = solve(t, false, m5(reservation("cr-1", zoneA, 2)), nil, Pods(4, web)...)
		reserved, other = count(plan)
		assert.Equal(t, []int{2, 2}, []int{reserved, other}, "a disruption simulation falls back")
	})
	t.Run("held by an in-flight claim not launched yet", func(t *testing.T) {
		inFlight := []scheduling.InFlightClaim{{Name: "reserved-old", NodePool: "reserved", PendingReservationID: "cr-1",
			Allocatable: scheduling.Resources{CPU: 100, Memory: 1 << 30, Pods: 10}}}
		plan := solve(t, true, m5(reservation("cr-1", zoneA, 1)), inFlight, Pods(1, web)...)
		assert.Empty(t, plan.NewClaims)
		assert.Len(t, plan.Unschedulable, 1)
	})
	t.Run("full as EC2 reports it: the next nodepool takes the pods", func(t *testing.T) {
		plan := solve(t, true, m5(reservation("cr-1", zoneA, 0)), nil, Pods(2, web)...)
		reserved, other := count(plan)
		assert.Equal(t, []int{0, 2}, []int{reserved, other})
		assert.Empty(t, plan.Unschedulable)
	})
	t.Run("a pod the nodepool cannot take anyway is not held", func(t *testing.T) {
		arm := PodOptions{Name: "other", CPU: "1500m", Memory: "1Gi", NodeSelector: map[string]string{scheduling.LabelCapacityType: scheduling.CapacityTypeSpot}}
		plan := solve(t, true, m5(reservation("cr-1", zoneA, 1)), nil, append(Pods(1, web), Pods(1, arm)...)...)
		reserved, other := count(plan)
		assert.Equal(t, []int{1, 1}, []int{reserved, other}, "the spot-only pod never needed the reservation")
		assert.Empty(t, plan.Unschedulable)
	})
	t.Run("preferences are not relaxed onto another reservation", func(t *testing.T) {
		prefersA := PodOptions{Name: "web", CPU: "1500m", Memory: "1Gi", NodePreferences: [][]corev1.NodeSelectorRequirement{
			{{Key: scheduling.LabelZone, Operator: corev1.NodeSelectorOpIn, Values: []string{zoneA}}}}}
		types := m5(reservation("cr-a", zoneA, 1), reservation("cr-b", zoneB, 5))
		plan := solve(t, true, types, nil, Pods(2, prefersA)...)
		require.Len(t, plan.NewClaims, 1)
		assert.Equal(t, "cr-a", plan.NewClaims[0].ReservationID)
		require.Len(t, plan.Unschedulable, 1, "waits for cr-a rather than relaxing its zone preference")
		assert.Empty(t, plan.Unschedulable[0].Relaxed)

		plan = solve(t, false, types, nil, Pods(2, prefersA)...)
		assert.Len(t, plan.NewClaims, 2, "without the rule the preference is relaxed onto cr-b")
		assert.Empty(t, plan.Unschedulable)
	})
}
