package launchtemplate

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// reservationTarget makes data launch into o's capacity reservation, if any: a fleet override cannot
// name a reservation, so a reserved launch goes through a template of its own per reservation. A capacity
// block also needs the capacity-block market type, and an interruptible reservation the
// interruptible-capacity-reservation one (as Karpenter's templates set them).
func reservationTarget(data *ec2types.RequestLaunchTemplateData, o Options) {
	if o.CapacityReservationID == "" {
		return
	}
	data.CapacityReservationSpecification = &ec2types.LaunchTemplateCapacityReservationSpecificationRequest{
		CapacityReservationTarget: &ec2types.CapacityReservationTarget{CapacityReservationId: aws.String(o.CapacityReservationID)},
	}
	switch {
	case o.CapacityReservationType == string(ec2types.CapacityReservationTypeCapacityBlock):
		data.InstanceMarketOptions = &ec2types.LaunchTemplateInstanceMarketOptionsRequest{MarketType: ec2types.MarketTypeCapacityBlock}
	case o.CapacityReservationInterruptible:
		data.InstanceMarketOptions = &ec2types.LaunchTemplateInstanceMarketOptionsRequest{MarketType: ec2types.MarketTypeInterruptibleCapacityReservation}
	}
}
