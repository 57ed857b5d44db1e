package provisioning

import (
	"context"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/instancetypes"
	"github.com/nodewright/nodewright/shared/adapters/nodeclass"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

type reservedWorld struct {
	store     *state.Store
	ec2       *fakeEC2Capacity
	templates *fakeTemplates
	p         *Provisioner
}

// newReservedProvisioner is newTestProvisioner's world with the class selecting an ODCR of m5.xlarge in
// us-east-1a (with room for available instances); EC2 has spot and reserved capacity as given.
// mutate, if given, changes the reservation first.
func newReservedProvisioner(t *testing.T, snap fakeCluster, available int32, capacity map[instance.Offering]bool,
	mutate ...func(*nodeclass.CapacityReservation)) reservedWorld {
	t.Helper()
	s := newStateStore(t)
	_, err := s.ApplyConfig(context.Background(), storedConfig(t, poolAndClass), false)
	require.NoError(t, err)
	cr := nodeclass.CapacityReservation{CapacityReservationStatus: apis.CapacityReservationStatus{ID: "cr-0abc", AvailabilityZone: "us-east-1a",
		InstanceType: "m5.xlarge", InstanceMatchCriteria: "targeted", OwnerID: "123456789012", ReservationType: "default", State: "active"}, Available: available}
	for _, m := range mutate {
		m(&cr)
	}
	resolved := nodeclass.Resolution{Ready: true, Subnets: []nodeclass.Subnet{{ID: "subnet-a", Zone: "us-east-1a"}},
		Status: testClass().resolved.Status, CapacityReservations: []nodeclass.CapacityReservation{cr}}
	resolved.Status.CapacityReservations = []apis.CapacityReservationStatus{cr.CapacityReservationStatus}
	w := reservedWorld{store: s, ec2: &fakeEC2Capacity{capacity: capacity}, templates: &fakeTemplates{}}
	w.p = New(Config{}, Dependencies{Store: s, Cluster: snap,
		NodeClasses: &fakeResolver{res: map[string]nodeclass.Resolution{"default": resolved}},
		Prices:      flatPrices{"m5.xlarge": 0.192}, Templates: w.templates, Launcher: w.ec2,
		Now: time.Now, Rand: rand.New(rand.NewPCG(7, 7))})
	w.p.catalog = &instancetypes.Catalog{Types: []instancetypes.Type{{Info: scheduling.InstanceInfo{Name: "m5.xlarge", VCPUs: 4,
		MemoryMiB: 16384, Architecture: "amd64", MaxENIs: 4, IPv4PerENI: 15, Hypervisor: "nitro"},
		Zones: []string{"us-east-1a"}, Spot: true, OnDemand: true}}}
	return w
}

var (
	reservedM5 = instance.Offering{InstanceType: "m5.xlarge", Zone: "us-east-1a", CapacityType: instance.CapacityTypeReserved}
	spotM5     = instance.Offering{InstanceType: "m5.xlarge", Zone: "us-east-1a", CapacityType: instance.CapacityTypeSpot}
)

func TestRunLaunchesIntoTheReservationFirst(t *testing.T) {
	w := newReservedProvisioner(t, fakeCluster{snap: pendingSnapshot(pod("a", nil))}, 2, map[instance.Offering]bool{reservedM5: true, spotM5: true})
	rep, err := w.p.Run(context.Background(), "run-1")
	require.NoError(t, err)
	assert.Empty(t, rep.Errors)
	require.Len(t, rep.Claims, 1)
	assert.Equal(t, scheduling.CapacityTypeReserved, rep.Claims[0].CapacityType, "reserved before spot")
	assert.Less(t, rep.Claims[0].Price, 0.0001, "reserved capacity is priced near zero")

	require.Len(t, w.ec2.requests, 1)
	req := w.ec2.requests[0]
	assert.Equal(t, instance.CapacityTypeReserved, req.CapacityType)
	require.Len(t, req.Overrides, 1)
	assert.Equal(t, "cr-0abc", req.Overrides[0].ReservationID)
	assert.Equal(t, "default", req.Overrides[0].ReservationType)

	var reservedTemplate bool
	for _, tmpl := range w.templates.made {
		if tmpl.Options.CapacityReservationID == "cr-0abc" {
			reservedTemplate = true
			assert.Equal(t, "default", tmpl.Options.CapacityReservationType)
			assert.Equal(t, "cr-0abc", tmpl.Options.Labels[apis.LabelCapacityReservationID])
			assert.Equal(t, "default", tmpl.Options.Labels[apis.LabelCapacityReservationType])
			assert.Equal(t, "reserved", tmpl.Options.Labels[apis.CapacityTypeLabelKey])
		} else {
			assert.NotContains(t, tmpl.Options.Labels, apis.LabelCapacityReservationID)
		}
	}
	assert.True(t, reservedTemplate, "the reserved launch has a template targeting the reservation")

	claim, err := w.store.GetClaim(context.Background(), rep.Claims[0].Name)
	require.NoError(t, err)
	assert.Equal(t, "reserved", claim.CapacityType)
	assert.Equal(t, "cr-0abc", claim.ReservationID, "the record names the reservation the solve counted it against")
}

func TestRunFallsBackWhenTheReservationIsExhausted(t *testing.T) {
	// The reservation still reports room, but EC2 answers ReservationCapacityExceeded.
	w := newReservedProvisioner(t, fakeCluster{snap: pendingSnapshot(pod("a", nil))}, 1, map[instance.Offering]bool{spotM5: true})
	rep, err := w.p.Run(context.Background(), "run-1")
	require.NoError(t, err)
	require.Len(t, rep.Claims, 1)
	assert.Equal(t, scheduling.CapacityTypeSpot, rep.Claims[0].CapacityType, "spot after the reservation failed")
	require.Len(t, w.ec2.requests, 2)
	assert.Equal(t, instance.CapacityTypeReserved, w.ec2.requests[0].CapacityType)
	assert.Equal(t, instance.CapacityTypeSpot, w.ec2.requests[1].CapacityType)

	gone, err := w.store.UnavailableOfferings(context.Background())
	require.NoError(t, err)
	require.Len(t, gone, 1)
	assert.Equal(t, state.Offering{InstanceType: "m5.xlarge", Zone: "us-east-1a", CapacityType: "reserved"}, gone[0].Offering,
		"the reserved offering is marked unavailable like an ICE")
}

func TestRunSkipsAFullReservation(t *testing.T) {
	w := newReservedProvisioner(t, fakeCluster{snap: pendingSnapshot(pod("a", nil))}, 0, map[instance.Offering]bool{reservedM5: true, spotM5: true})
	rep, err := w.p.Run(context.Background(), "run-1")
	require.NoError(t, err)
	require.Len(t, rep.Claims, 1)
	assert.Equal(t, scheduling.CapacityTypeSpot, rep.Claims[0].CapacityType)
	require.Len(t, w.ec2.requests, 1, "a reservation with no available instance is not tried")
}

// The disruption run judges reservations' ends from what PrepareLaunches resolved, without another call:
// the classes' usable reservations by id, and on-demand prices to demote a claim with.
func TestLaunchesTellTheResolvedReservationsAndOnDemandPrices(t *testing.T) {
	w := newReservedProvisioner(t, fakeCluster{snap: pendingSnapshot()}, 2, nil)
	l, err := w.p.PrepareLaunches(context.Background())
	require.NoError(t, err)
	rs := l.Reservations()
	require.Contains(t, rs, "cr-0abc")
	assert.Equal(t, "default", rs["cr-0abc"].ReservationType)
	assert.Equal(t, "us-east-1a", rs["cr-0abc"].AvailabilityZone)
	assert.Len(t, rs, 1)
	price, ok := l.OnDemandPrice("m5.xlarge")
	assert.True(t, ok)
	assert.InDelta(t, 0.192, price, 1e-9)
	_, ok = l.OnDemandPrice("x9.nothing")
	assert.False(t, ok)
}

// TestRunLaunchesAnInterruptibleReservationAsOne checks that an interruptible reservation's launch says so
// (the override, hence the fleet's reserved-capacity options), its template has the
// interruptible-capacity-reservation market and the label, and the claim is labelled
// capacity-reservation-interruptible=true; a plain ODCR's claim is labelled false, as Karpenter labels
// every reserved NodeClaim.
func TestRunLaunchesAnInterruptibleReservationAsOne(t *testing.T) {
	for _, interruptible := range []bool{true, false} {
		w := newReservedProvisioner(t, fakeCluster{snap: pendingSnapshot(pod("a", nil))}, 2, map[instance.Offering]bool{reservedM5: true, spotM5: true},
			func(cr *nodeclass.CapacityReservation) { cr.Interruptible = interruptible })
		rep, err := w.p.Run(context.Background(), "run-1")
		require.NoError(t, err)
		require.Len(t, rep.Claims, 1)
		require.Len(t, w.ec2.requests, 1)
		require.Len(t, w.ec2.requests[0].Overrides, 1)
		assert.Equal(t, interruptible, w.ec2.requests[0].Overrides[0].Interruptible)
		want := strconv.FormatBool(interruptible)
		for _, tmpl := range w.templates.made {
			if tmpl.Options.CapacityReservationID == "cr-0abc" {
				assert.Equal(t, interruptible, tmpl.Options.CapacityReservationInterruptible)
				assert.Equal(t, want, tmpl.Options.Labels[apis.LabelCapacityReservationInterruptible])
			}
		}
		claim, err := w.store.GetClaim(context.Background(), rep.Claims[0].Name)
		require.NoError(t, err)
		assert.Equal(t, want, claim.Labels[apis.LabelCapacityReservationInterruptible])
		assert.Equal(t, "cr-0abc", claim.Labels[apis.LabelCapacityReservationID])
	}
}

// TestRunKeepsAPodRequiringAReservationOffSpot checks that a claim whose pod requires a reservation label
// is never launched on spot or on-demand when the reservation turns out full at launch.
func TestRunKeepsAPodRequiringAReservationOffSpot(t *testing.T) {
	p := pod("a", nil)
	p.Spec.NodeSelector = map[string]string{apis.LabelCapacityReservationInterruptible: "false"}
	w := newReservedProvisioner(t, fakeCluster{snap: pendingSnapshot(p)}, 1, map[instance.Offering]bool{spotM5: true})
	_, err := w.p.Run(context.Background(), "run-1")
	require.NoError(t, err)
	for _, req := range w.ec2.requests {
		assert.Equal(t, instance.CapacityTypeReserved, req.CapacityType, "only the reservation may be tried")
	}
	require.NotEmpty(t, w.ec2.requests)
}
