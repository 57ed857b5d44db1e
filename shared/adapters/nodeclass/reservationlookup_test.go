package nodeclass

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reservationsByID answers DescribeCapacityReservations by id with EC2's XML: the known reservations
// (id → state, type), and EC2's NotFound error for a request naming any other id. It records each
// call's ids (its first attempt; see amz-sdk-request).
type reservationsByID struct {
	mu       sync.Mutex
	known    map[string][2]string
	requests [][]string
}

func newReservationsByID(t *testing.T, known map[string][2]string) (*ec2.Client, *reservationsByID) {
	t.Helper()
	w := &reservationsByID{known: known}
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil || r.Form.Get("Action") != "DescribeCapacityReservations" {
			http.Error(rw, "unexpected request", http.StatusBadRequest)
			return
		}
		var ids []string
		for i := 1; r.Form.Get("CapacityReservationId."+strconv.Itoa(i)) != ""; i++ {
			ids = append(ids, r.Form.Get("CapacityReservationId."+strconv.Itoa(i)))
		}
		// A call is recorded once: the SDK's own retries of it (attempt 2 and on, after a transport error
		// on a loaded machine) are the SDK's, not the lookup's calls.
		if !strings.Contains(r.Header.Get("amz-sdk-request"), "attempt=") || strings.Contains(r.Header.Get("amz-sdk-request"), "attempt=1;") {
			w.mu.Lock()
			w.requests = append(w.requests, ids)
			w.mu.Unlock()
		}
		rw.Header().Set("Content-Type", "text/xml;charset=UTF-8")
		var items strings.Builder
		for _, id := range ids {
			k, ok := w.known[id]
			if !ok {
				rw.WriteHeader(http.StatusBadRequest)
				_, _ = rw.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Response><Errors><Error><Code>InvalidCapacityReservationId.NotFound</Code>` +
					`<Message>The capacity reservation ID '` + id + `' does not exist</Message></Error></Errors><RequestID>r-2</RequestID></Response>`))
				return
			}
			items.WriteString(`<item><capacityReservationId>` + id + `</capacityReservationId><state>` + k[0] +
				`</state><reservationType>` + k[1] + `</reservationType><endDate>2026-12-01T00:00:00.000Z</endDate></item>`)
		}
		_, _ = rw.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?>
<DescribeCapacityReservationsResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>r-1</requestId>` +
			`<capacityReservationSet>` + items.String() + `</capacityReservationSet></DescribeCapacityReservationsResponse>`))
	}))
	t.Cleanup(srv.Close)
	return ec2.New(ec2.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("a", "b", "")}), w
}

// One call answers for every id, each asked once; states and types come back as EC2 says them.
func TestReservationLookupAsksOnceForAllIDs(t *testing.T) {
	client, wire := newReservationsByID(t, map[string][2]string{"cr-a": {"active", "capacity-block"}, "cr-b": {"expired", ""}})
	got, err := NewReservationLookup(client).Lookup(context.Background(), []string{"cr-b", "cr-a", "cr-b", ""})
	require.NoError(t, err)
	assert.Equal(t, [][]string{{"cr-a", "cr-b"}}, wire.requests)
	require.Len(t, got, 2)
	assert.True(t, got["cr-a"].Active())
	assert.Equal(t, "capacity-block", got["cr-a"].ReservationType)
	require.NotNil(t, got["cr-a"].EndTime)
	assert.True(t, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC).Equal(*got["cr-a"].EndTime))
	assert.False(t, got["cr-b"].Active())
	assert.True(t, got["cr-b"].Found)
	assert.Equal(t, "expired", got["cr-b"].State)
	assert.Equal(t, "default", got["cr-b"].ReservationType, "no type means default")
}

// EC2 refuses a whole request when one id names no reservation: each id is then asked about alone, so the
// gone one is told from the others.
func TestReservationLookupTellsAGoneReservationApart(t *testing.T) {
	client, wire := newReservationsByID(t, map[string][2]string{"cr-a": {"active", "default"}})
	got, err := NewReservationLookup(client).Lookup(context.Background(), []string{"cr-gone", "cr-a"})
	require.NoError(t, err)
	assert.Equal(t, [][]string{{"cr-a", "cr-gone"}, {"cr-a"}, {"cr-gone"}}, wire.requests)
	assert.True(t, got["cr-a"].Active())
	assert.False(t, got["cr-gone"].Found)
	assert.False(t, got["cr-gone"].Active())
}

// A lookup asks about MaxReservationLookups ids at most; no ids, no call.
func TestReservationLookupIsBounded(t *testing.T) {
	known := map[string][2]string{}
	var ids []string
	for i := range MaxReservationLookups + 10 {
		id := "cr-" + strconv.Itoa(1000+i)
		known[id] = [2]string{"active", "default"}
		ids = append(ids, id)
	}
	client, wire := newReservationsByID(t, known)
	l := NewReservationLookup(client)
	got, err := l.Lookup(context.Background(), ids)
	require.NoError(t, err)
	assert.Len(t, got, MaxReservationLookups)
	require.Len(t, wire.requests, 1)
	assert.Len(t, wire.requests[0], MaxReservationLookups)

	got, err = l.Lookup(context.Background(), nil)
	require.NoError(t, err)
	assert.Empty(t, got)
	assert.Len(t, wire.requests, 1)
}
