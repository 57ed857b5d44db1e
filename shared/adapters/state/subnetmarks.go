package state

import (
	"context"
	"errors"
	"time"
)

// unavailableSubnetPartition holds the subnets EC2 recently found without free addresses, one item per
// subnet (sort key: the subnet id), each expiring UnavailableCapacityTTL after its last mark.
const unavailableSubnetPartition = "UNAVAILABLESUBNET"

// UnavailableSubnet is a subnet a fleet answered InsufficientFreeAddressesInSubnet for: launches take the
// next subnet of its zone until Until, and the zone's offerings count as unavailable only while every
// subnet of the zone is marked (Karpenter's subnet key of its unavailable-offerings cache).
type UnavailableSubnet struct {
	SubnetID string `dynamodbav:"subnetId"`
	Zone     string `dynamodbav:"zone"`
	Reason   string `dynamodbav:"reason"`
	UntilMS  int64  `dynamodbav:"until"`
	TTL      int64  `dynamodbav:"ttl"`
}

// Until is when the subnet may be chosen again.
func (u UnavailableSubnet) Until() time.Time { return time.UnixMilli(u.UntilMS) }

// MarkSubnetUnavailable takes a subnet out of the launches' subnet choice for ttl, for every invocation
// that reads the table. Marking it again extends the window.
func (s *Store) MarkSubnetUnavailable(ctx context.Context, subnetID, zone, reason string, ttl time.Duration) error {
	if subnetID == "" {
		return errors.New("marking a subnet unavailable: subnetId is empty")
	}
	until := s.now().Add(ttl)
	return s.putMark(ctx, unavailableSubnetPartition, subnetID, UnavailableSubnet{
		SubnetID: subnetID, Zone: zone, Reason: reason, UntilMS: until.UnixMilli(), TTL: until.Unix() + 1,
	}, "subnet "+subnetID)
}

// UnavailableSubnets returns the subnets still out now. The read is bounded by what can be marked: one
// item per subnet the EC2NodeClasses select that a fleet found full in the last UnavailableCapacityTTL
// (an account has at most a few hundred subnets per VPC; DynamoDB's TTL and the Until check drop the rest).
func (s *Store) UnavailableSubnets(ctx context.Context) ([]UnavailableSubnet, error) {
	return liveMarks(ctx, s, unavailableSubnetPartition, func(u *UnavailableSubnet) int64 { return u.UntilMS }, "unavailable subnets")
}
