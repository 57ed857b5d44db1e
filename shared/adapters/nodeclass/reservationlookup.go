package nodeclass

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
)

// ReservationState is what EC2 says now of one capacity reservation a node runs in.
type ReservationState struct {
	ID string
	// Found is false when EC2 knows no reservation of that id (gone, or no longer shared with the account).
	Found bool
	// State is EC2's: active, expired, cancelled, failed, payment-failed...
	State string
	// ReservationType is default or capacity-block.
	ReservationType string
	EndTime         *time.Time
}

// Active reports whether instances still run in the reservation as reserved capacity.
func (s ReservationState) Active() bool { return s.Found && s.State == ReservationStateActive }

// MaxReservationLookups bounds the reservations one Lookup asks EC2 about; the caller looks the rest up
// on its next run.
const MaxReservationLookups = 50

// ReservationLookup reads capacity reservations by id, for the nodes whose reservation no resolved
// EC2NodeClass selects any more (the classes' resolution answers for every other). *ec2.Client
// satisfies its client.
type ReservationLookup struct {
	ec2 ec2.DescribeCapacityReservationsAPIClient
}

// NewReservationLookup returns a lookup through client.
func NewReservationLookup(client ec2.DescribeCapacityReservationsAPIClient) *ReservationLookup {
	return &ReservationLookup{ec2: client}
}

// Lookup says what EC2 knows of each of ids (the first MaxReservationLookups of them, sorted and without
// repeats; the others are not in the answer). Cost: one DescribeCapacityReservations by id for all of
// them, read page by page; only when EC2 answers that one of the ids does not exist (it then answers
// nothing for the others) is each asked about on its own, so a vanished reservation is told from the
// live ones. The error is for a call that failed: no answer is then given for any id.
func (l *ReservationLookup) Lookup(ctx context.Context, ids []string) (map[string]ReservationState, error) {
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	ids = slices.DeleteFunc(ids, func(id string) bool { return id == "" })
	if len(ids) > MaxReservationLookups {
		ids = ids[:MaxReservationLookups]
	}
	out := make(map[string]ReservationState, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	err := l.describe(ctx, ids, out)
	if err == nil || !reservationNotFound(err) {
		return out, err
	}
	clear(out)
	for _, id := range ids {
		err := l.describe(ctx, []string{id}, out)
		switch {
		case reservationNotFound(err):
			out[id] = ReservationState{ID: id}
		case err != nil:
			return nil, err
		}
	}
	return out, nil
}

// describe reads the reservations ids into out; an id EC2 did not return is recorded as not found.
func (l *ReservationLookup) describe(ctx context.Context, ids []string, out map[string]ReservationState) error {
	pager := ec2.NewDescribeCapacityReservationsPaginator(l.ec2, &ec2.DescribeCapacityReservationsInput{CapacityReservationIds: ids})
	for pager.HasMorePages() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("describing capacity reservations %s: %w", strings.Join(ids, ","), err)
		}
		for _, cr := range page.CapacityReservations {
			id := aws.ToString(cr.CapacityReservationId)
			rtype := string(cr.ReservationType)
			if rtype == "" {
				rtype = "default"
			}
			out[id] = ReservationState{ID: id, Found: true, State: string(cr.State), ReservationType: rtype, EndTime: cr.EndDate}
		}
	}
	for _, id := range ids {
		if _, ok := out[id]; !ok {
			out[id] = ReservationState{ID: id}
		}
	}
	return nil
}

// reservationNotFound reports whether EC2 answered that a reservation id names no reservation.
func reservationNotFound(err error) bool {
	return err != nil && strings.HasSuffix(apiCode(err), ".NotFound")
}
