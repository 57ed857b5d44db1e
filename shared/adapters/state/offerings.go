package state

import (
	"context"
	"time"
)

const unavailablePartition = "UNAVAILABLE"

// UnavailableCapacityTTL is how long an offering stays out after an insufficient-capacity error.
const UnavailableCapacityTTL = 3 * time.Minute

// DiedAtLaunchTTL is how long an offering stays out after EC2 terminated an instance of it while
// launching it (before its Node registered). A capacity error passes in minutes, but such a launch mostly
// dies for a reason that does not pass by itself (a volume key the launching role may not use, a disabled
// key, a deleted snapshot): the same offering launched again a few minutes later dies again, every few
// minutes, without end. Half an hour bounds that to two launches an hour per offering while an operator
// fixes the cause, and lets the solves pick other offerings meanwhile.
const DiedAtLaunchTTL = 30 * time.Minute

// Offering is one place an instance type can be bought: type × zone × capacity type, or one capacity
// reservation of it (ReservationID, capacity type reserved): a reservation whose owner reclaims it is
// taken out alone, as Karpenter marks the reservation rather than every reserved offering of the type.
type Offering struct {
	InstanceType  string `dynamodbav:"instanceType"`
	Zone          string `dynamodbav:"zone"`
	CapacityType  string `dynamodbav:"capacityType"`
	ReservationID string `dynamodbav:"reservationId,omitempty"`
}

func (o Offering) String() string {
	s := o.CapacityType + "#" + o.InstanceType + "#" + o.Zone
	if o.ReservationID != "" {
		s += "#" + o.ReservationID
	}
	return s
}

// UnavailableOffering is an offering taken out of consideration until Until.
type UnavailableOffering struct {
	Offering
	Reason  string `dynamodbav:"reason"`
	UntilMS int64  `dynamodbav:"until"`
	TTL     int64  `dynamodbav:"ttl"`
}

// Until is when the offering may be tried again.
func (u UnavailableOffering) Until() time.Time { return time.UnixMilli(u.UntilMS) }

// MarkUnavailable takes an offering out for ttl, for every invocation that reads the table. Marking it
// again extends the window.
func (s *Store) MarkUnavailable(ctx context.Context, o Offering, reason string, ttl time.Duration) error {
	until := s.now().Add(ttl)
	return s.putMark(ctx, unavailablePartition, o.String(), UnavailableOffering{
		Offering: o, Reason: reason, UntilMS: until.UnixMilli(), TTL: until.Unix() + 1,
	}, o.String())
}

// UnavailableOfferings returns the offerings still out now.
func (s *Store) UnavailableOfferings(ctx context.Context) ([]UnavailableOffering, error) {
	return liveMarks(ctx, s, unavailablePartition, func(u *UnavailableOffering) int64 { return u.UntilMS }, "unavailable offerings")
}
