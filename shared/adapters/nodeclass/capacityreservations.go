package nodeclass

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/core/apis"
)

// CapacityReservation is a resolved capacity reservation a node class may launch into.
type CapacityReservation struct {
	apis.CapacityReservationStatus
	// Available is how many more instances the reservation can take.
	Available int32
}

// capacityReservations returns the active Linux/UNIX reservations matching any term in one of zones,
// ordered by id, each with its state at the resolver's time (usableReservation). A term by id that names
// no reservation matches nothing.
func (r *Resolver) capacityReservations(ctx context.Context, terms []apis.CapacityReservationSelectorTerm, zones map[string]bool) ([]CapacityReservation, error) {
	seen := map[string]CapacityReservation{}
	for _, term := range terms {
		pager := ec2.NewDescribeCapacityReservationsPaginator(r.ec2, reservationQuery(term))
		for pager.HasMorePages() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				if notFound(err) {
					break
				}
				return nil, fmt.Errorf("describing capacity reservations: %w", err)
			}
			for _, cr := range page.CapacityReservations {
				if res, ok := usableReservation(cr, zones, r.now()); ok {
					seen[res.ID] = res
				}
			}
		}
	}
	out := make([]CapacityReservation, 0, len(seen))
	for _, cr := range seen {
		out = append(out, cr)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// reservationQuery is the DescribeCapacityReservations input of one term: by id alone, or by tags, owner
// and instance match criteria ANDed; active reservations only.
func reservationQuery(term apis.CapacityReservationSelectorTerm) *ec2.DescribeCapacityReservationsInput {
	if term.ID != "" {
		return &ec2.DescribeCapacityReservationsInput{CapacityReservationIds: []string{term.ID}}
	}
	filters := tagFilters(term.Tags)
	if term.OwnerID != "" {
		filters = append(filters, ec2types.Filter{Name: aws.String("owner-id"), Values: []string{term.OwnerID}})
	}
	if term.InstanceMatchCriteria != "" {
		filters = append(filters, ec2types.Filter{Name: aws.String("instance-match-criteria"), Values: []string{term.InstanceMatchCriteria}})
	}
	filters = append(filters, ec2types.Filter{Name: aws.String("state"), Values: []string{string(ec2types.CapacityReservationStateActive)}})
	return &ec2.DescribeCapacityReservationsInput{Filters: filters}
}

// usableReservation keeps a reservation that is active, for Linux/UNIX, and in one of the class's zones
// (filters EC2 applies are checked again, since an id term carries none). Its state is expiring, and it
// takes no launch (Available 0), for a capacity block whose end is within CapacityBlockDrainLead of now,
// as Karpenter makes such a block's offerings unavailable: a node launched into it would be drained at
// once. Classes that select reservations are never cached (Cache), so the state is as of this run.
func usableReservation(cr ec2types.CapacityReservation, zones map[string]bool, now time.Time) (CapacityReservation, bool) {
	zone := aws.ToString(cr.AvailabilityZone)
	if cr.State != ec2types.CapacityReservationStateActive || cr.InstancePlatform != ec2types.CapacityReservationInstancePlatformLinuxUnix || !zones[zone] {
		return CapacityReservation{}, false
	}
	rtype := string(cr.ReservationType)
	if rtype == "" {
		rtype = string(ec2types.CapacityReservationTypeDefault)
	}
	out := CapacityReservation{CapacityReservationStatus: apis.CapacityReservationStatus{
		ID: aws.ToString(cr.CapacityReservationId), AvailabilityZone: zone, InstanceType: aws.ToString(cr.InstanceType),
		InstanceMatchCriteria: string(cr.InstanceMatchCriteria), OwnerID: aws.ToString(cr.OwnerId), ReservationType: rtype,
		Interruptible: aws.ToBool(cr.Interruptible), State: ReservationStateActive,
	}, Available: aws.ToInt32(cr.AvailableInstanceCount)}
	if cr.EndDate != nil {
		end := metav1.NewTime(*cr.EndDate)
		out.EndTime = &end
	}
	if BlockEnding(rtype, cr.EndDate, now) {
		out.State, out.Available = ReservationStateExpiring, 0
	}
	return out, true
}
