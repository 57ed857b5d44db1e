package nodeclass

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/core/apis"
)

// reservationsEC2 is moto for everything but capacity reservations, which moto does not implement; those
// come from an endpoint answering with EC2's XML, so the SDK decodes real wire shapes.
type reservationsEC2 struct {
	*ec2.Client
	wire *ec2.Client
}

func (r reservationsEC2) DescribeCapacityReservations(ctx context.Context, in *ec2.DescribeCapacityReservationsInput, optFns ...func(*ec2.Options)) (*ec2.DescribeCapacityReservationsOutput, error) {
	return r.wire.DescribeCapacityReservations(ctx, in, optFns...)
}

// reservationWire answers DescribeCapacityReservations with pages of reservation items (the page index is
// the NextToken) and records each request's form.
type reservationWire struct {
	mu       sync.Mutex
	pages    []string
	requests []url.Values
}

func newReservationWire(t *testing.T, pages ...string) (*ec2.Client, *reservationWire) {
	t.Helper()
	w := &reservationWire{pages: pages}
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil || r.Form.Get("Action") != "DescribeCapacityReservations" {
			http.Error(rw, "unexpected request", http.StatusBadRequest)
			return
		}
		w.mu.Lock()
		w.requests = append(w.requests, r.Form)
		w.mu.Unlock()
		page, _ := strconv.Atoi(r.Form.Get("NextToken")) // no token: the first page
		next := ""
		if page+1 < len(w.pages) {
			next = "<nextToken>" + strconv.Itoa(page+1) + "</nextToken>"
		}
		rw.Header().Set("Content-Type", "text/xml;charset=UTF-8")
		_, _ = rw.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?>
<DescribeCapacityReservationsResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>r-1</requestId>` + next +
			`<capacityReservationSet>` + w.pages[page] + `</capacityReservationSet></DescribeCapacityReservationsResponse>`))
	}))
	t.Cleanup(srv.Close)
	return ec2.New(ec2.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("a", "b", "")}), w
}

// reservationXML is one capacityReservationSet item.
func reservationXML(id, zone, instanceType, platform, state, criteria, rtype string, available int) string {
	return `<item><capacityReservationId>` + id + `</capacityReservationId><ownerId>123456789012</ownerId>
<instanceType>` + instanceType + `</instanceType><instancePlatform>` + platform + `</instancePlatform>
<availabilityZone>` + zone + `</availabilityZone><tenancy>default</tenancy><totalInstanceCount>4</totalInstanceCount>
<availableInstanceCount>` + strconv.Itoa(available) + `</availableInstanceCount><state>` + state + `</state>
<instanceMatchCriteria>` + criteria + `</instanceMatchCriteria><reservationType>` + rtype + `</reservationType>
<endDate>2026-12-01T00:00:00.000Z</endDate><tagSet><item><key>team</key><value>ml</value></item></tagSet></item>`
}

func TestResolveCapacityReservations(t *testing.T) {
	w := newWorld(t)
	wire, rec := newReservationWire(t,
		reservationXML("cr-0a", "us-east-1a", "m5.large", "Linux/UNIX", "active", "targeted", "default", 2)+
			reservationXML("cr-0b", "us-east-1c", "m5.large", "Linux/UNIX", "active", "open", "default", 1), // no subnet in 1c
		reservationXML("cr-0c", "us-east-1b", "p5.48xlarge", "Linux/UNIX", "active", "targeted", "capacity-block", 1)+
			reservationXML("cr-0d", "us-east-1b", "m5.large", "Windows", "active", "open", "default", 3)+
			reservationXML("cr-0e", "us-east-1a", "m5.large", "Linux/UNIX", "expired", "open", "default", 0))
	r := New(reservationsEC2{Client: w.ec2, wire: wire}, fakeSSM{}, w.iam, "demo", "us-east-1", func() time.Time { return now })
	res, err := r.Resolve(context.Background(), nodeClass(func(s *apis.EC2NodeClassSpec) {
		s.CapacityReservationSelectorTerms = []apis.CapacityReservationSelectorTerm{{Tags: map[string]string{"team": "ml"}, OwnerID: "123456789012"}}
	}), "1.34")
	require.NoError(t, err)
	require.True(t, res.Ready, "%+v", res.Status.Conditions)
	assert.Equal(t, "CapacityReservationsReady", condition(res, apis.ConditionTypeCapacityReservationsReady).Reason)

	require.Len(t, rec.requests, 2, "every page is read")
	form := rec.requests[0]
	filters := map[string]string{}
	for i := 1; form.Get("Filter."+strconv.Itoa(i)+".Name") != ""; i++ {
		filters[form.Get("Filter."+strconv.Itoa(i)+".Name")] = form.Get("Filter." + strconv.Itoa(i) + ".Value.1")
	}
	assert.Equal(t, map[string]string{"tag:team": "ml", "owner-id": "123456789012", "state": "active"}, filters)

	require.Len(t, res.CapacityReservations, 2, "only active Linux/UNIX reservations in the class's zones")
	a, c := res.CapacityReservations[0], res.CapacityReservations[1]
	assert.Equal(t, "cr-0a", a.ID)
	assert.Equal(t, "us-east-1a", a.AvailabilityZone)
	assert.Equal(t, "m5.large", a.InstanceType)
	assert.Equal(t, "targeted", a.InstanceMatchCriteria)
	assert.Equal(t, "123456789012", a.OwnerID)
	assert.Equal(t, "default", a.ReservationType)
	assert.EqualValues(t, 2, a.Available)
	require.NotNil(t, a.EndTime)
	assert.Equal(t, "capacity-block", c.ReservationType)
	assert.Equal(t, []apis.CapacityReservationStatus{a.CapacityReservationStatus, c.CapacityReservationStatus}, res.Status.CapacityReservations)
}

func TestResolveCapacityReservationByID(t *testing.T) {
	w := newWorld(t)
	wire, rec := newReservationWire(t, reservationXML("cr-0123456789abcdef0", "us-east-1b", "c5.xlarge", "Linux/UNIX", "active", "targeted", "default", 1))
	r := New(reservationsEC2{Client: w.ec2, wire: wire}, fakeSSM{}, w.iam, "demo", "us-east-1", func() time.Time { return now })
	res, err := r.Resolve(context.Background(), nodeClass(func(s *apis.EC2NodeClassSpec) {
		s.CapacityReservationSelectorTerms = []apis.CapacityReservationSelectorTerm{{ID: "cr-0123456789abcdef0"}}
	}), "1.34")
	require.NoError(t, err)
	require.Len(t, rec.requests, 1)
	assert.Equal(t, "cr-0123456789abcdef0", rec.requests[0].Get("CapacityReservationId.1"))
	assert.Empty(t, rec.requests[0].Get("Filter.1.Name"), "an id term sends no filters")
	require.Len(t, res.CapacityReservations, 1)
	assert.Equal(t, "c5.xlarge", res.CapacityReservations[0].InstanceType)
}

func TestResolveWithoutReservationTermsCallsNothing(t *testing.T) {
	w := newWorld(t)
	wire, rec := newReservationWire(t, "")
	r := New(reservationsEC2{Client: w.ec2, wire: wire}, fakeSSM{}, w.iam, "demo", "us-east-1", func() time.Time { return now })
	res, err := r.Resolve(context.Background(), nodeClass(nil), "1.34")
	require.NoError(t, err)
	assert.Empty(t, rec.requests)
	assert.Empty(t, res.CapacityReservations)
	assert.Empty(t, condition(res, apis.ConditionTypeCapacityReservationsReady).Type, "no condition without terms")
}

// A capacity block takes no launch from 40 minutes before its end (2026-12-01T00:00Z in reservationXML):
// its state is expiring and its room zero, as Karpenter marks it; at 41 minutes it is still active.
func TestEndingCapacityBlockIsExpiring(t *testing.T) {
	end := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name      string
		at        time.Time
		state     string
		available int32
	}{
		{name: "41 minutes before", at: end.Add(-41 * time.Minute), state: "active", available: 3},
		{name: "39 minutes before", at: end.Add(-39 * time.Minute), state: "expiring", available: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			wire, _ := newReservationWire(t,
				reservationXML("cr-blk", "us-east-1a", "p5.48xlarge", "Linux/UNIX", "active", "targeted", "capacity-block", 3)+
					reservationXML("cr-odcr", "us-east-1a", "m5.large", "Linux/UNIX", "active", "targeted", "default", 2))
			r := New(reservationsEC2{Client: w.ec2, wire: wire}, fakeSSM{}, w.iam, "demo", "us-east-1", func() time.Time { return tc.at })
			res, err := r.Resolve(context.Background(), nodeClass(func(s *apis.EC2NodeClassSpec) {
				s.CapacityReservationSelectorTerms = []apis.CapacityReservationSelectorTerm{{Tags: map[string]string{"team": "ml"}}}
			}), "1.34")
			require.NoError(t, err)
			require.Len(t, res.CapacityReservations, 2)
			blk, odcr := res.CapacityReservations[0], res.CapacityReservations[1]
			assert.Equal(t, tc.state, blk.State)
			assert.Equal(t, tc.available, blk.Available)
			assert.Equal(t, "active", odcr.State, "an ODCR ending soon is not a block")
			assert.EqualValues(t, 2, odcr.Available)
		})
	}
}
