package instance

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func reservedRequest(rtype string) Request {
	return Request{Cluster: "demo", Claim: "default-abc", NodePool: "default", NodeClass: "default", CapacityType: CapacityTypeReserved,
		Overrides: []Override{
			{InstanceType: "m5.large", Zone: "us-east-1a", SubnetID: "subnet-a", LaunchTemplate: "lt-cr-1", ReservationID: "cr-1", ReservationType: rtype},
			{InstanceType: "m5.large", Zone: "us-east-1b", SubnetID: "subnet-b", LaunchTemplate: "lt-cr-2", ReservationID: "cr-2", ReservationType: rtype},
		}}
}

func TestReservedLaunchIsOnDemandThroughTargetingTemplates(t *testing.T) {
	f := &fakeEC2{out: &ec2.CreateFleetOutput{Instances: []ec2types.CreateFleetInstance{{InstanceIds: []string{"i-0abc"}, InstanceType: "m5.large",
		LaunchTemplateAndOverrides: &ec2types.LaunchTemplateAndOverridesResponse{Overrides: &ec2types.FleetLaunchTemplateOverrides{
			AvailabilityZone: aws.String("us-east-1b")}}}}}}
	inst, err := New(f, "demo").Launch(context.Background(), reservedRequest(ReservationTypeDefault))
	require.NoError(t, err)
	assert.Equal(t, CapacityTypeReserved, inst.CapacityType)
	assert.Equal(t, "cr-2", inst.CapacityReservationID, "the reservation of the override it launched from")

	in := f.last
	assert.Equal(t, ec2types.DefaultTargetCapacityTypeOnDemand, in.TargetCapacitySpecification.DefaultTargetCapacityType)
	require.NotNil(t, in.OnDemandOptions)
	assert.Nil(t, in.SpotOptions)
	require.Len(t, in.LaunchTemplateConfigs, 2, "one launch template per reservation")
	assert.Equal(t, "lt-cr-1", aws.ToString(in.LaunchTemplateConfigs[0].LaunchTemplateSpecification.LaunchTemplateName))

	f.last = nil
	_, err = New(f, "demo").Launch(context.Background(), reservedRequest(ReservationTypeCapacityBlock))
	require.NoError(t, err)
	assert.Equal(t, ec2types.DefaultTargetCapacityTypeCapacityBlock, f.last.TargetCapacitySpecification.DefaultTargetCapacityType)
	assert.Nil(t, f.last.OnDemandOptions, "a capacity block takes no on-demand options")
}

func TestReservedLaunchRefusesIncompleteOverrides(t *testing.T) {
	for name, mutate := range map[string]func(*Request){
		"no reservation": func(r *Request) { r.Overrides[0].ReservationID = "" },
		"mixed types":    func(r *Request) { r.Overrides[1].ReservationType = ReservationTypeCapacityBlock },
		"unknown type":   func(r *Request) { r.Overrides[0].ReservationType, r.Overrides[1].ReservationType = "odd", "odd" },
	} {
		t.Run(name, func(t *testing.T) {
			req := reservedRequest(ReservationTypeDefault)
			mutate(&req)
			_, err := New(&fakeEC2{}, "demo").Launch(context.Background(), req)
			assert.Equal(t, KindInvalidRequest, KindOf(err), "%v", err)
		})
	}
}

func TestWireReservationCapacityExceededIsInsufficientCapacity(t *testing.T) {
	client, _ := newEC2Wire(t, map[string][]wireAnswer{
		"DescribeInstances": {{200, noInstances}},
		"CreateFleet":       {{200, fleetXML(fleetErrorItem("ReservationCapacityExceeded", "m5.large", "subnet-a"), "")}},
	})
	_, err := New(client, "demo").Launch(context.Background(), reservedRequest(ReservationTypeDefault))
	var ice *InsufficientCapacityError
	require.ErrorAs(t, err, &ice)
	assert.Equal(t, []Offering{{"m5.large", "us-east-1a", CapacityTypeReserved}}, ice.Offerings)
	assert.Equal(t, []string{"ReservationCapacityExceeded"}, ice.Codes)
}

// TestInterruptibleReservedLaunchUsesReservedCapacityOptions checks that a launch into an interruptible
// reservation is a reserved-capacity fleet whose options name interruptible-capacity-reservation, as
// Karpenter launches one, and that the instance is known to run in an interruptible reservation.
func TestInterruptibleReservedLaunchUsesReservedCapacityOptions(t *testing.T) {
	f := &fakeEC2{out: &ec2.CreateFleetOutput{Instances: []ec2types.CreateFleetInstance{{InstanceIds: []string{"i-0abc"}, InstanceType: "m5.large",
		LaunchTemplateAndOverrides: &ec2types.LaunchTemplateAndOverridesResponse{Overrides: &ec2types.FleetLaunchTemplateOverrides{
			AvailabilityZone: aws.String("us-east-1b")}}}}}}
	req := reservedRequest(ReservationTypeDefault)
	for i := range req.Overrides {
		req.Overrides[i].Interruptible = true
	}
	inst, err := New(f, "demo").Launch(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, CapacityTypeReserved, inst.CapacityType)
	assert.Equal(t, "cr-2", inst.CapacityReservationID)
	assert.True(t, inst.InterruptibleReservation)

	in := f.last
	assert.Equal(t, ec2types.DefaultTargetCapacityTypeReservedCapacity, in.TargetCapacitySpecification.DefaultTargetCapacityType)
	require.NotNil(t, in.ReservedCapacityOptions)
	assert.Equal(t, []ec2types.FleetReservationType{ec2types.FleetReservationTypeInterruptibleCapacityReservation}, in.ReservedCapacityOptions.ReservationTypes)
	assert.Nil(t, in.OnDemandOptions, "an interruptible reservation takes no on-demand options")
	assert.Nil(t, in.SpotOptions)

	f.last = nil
	inst, err = New(f, "demo").Launch(context.Background(), reservedRequest(ReservationTypeDefault))
	require.NoError(t, err)
	assert.False(t, inst.InterruptibleReservation)
	assert.Nil(t, f.last.ReservedCapacityOptions, "a plain targeted ODCR is an on-demand fleet")
}

func TestReservedLaunchRefusesMixedInterruptible(t *testing.T) {
	req := reservedRequest(ReservationTypeDefault)
	req.Overrides[1].Interruptible = true
	_, err := New(&fakeEC2{}, "demo").Launch(context.Background(), req)
	assert.Equal(t, KindInvalidRequest, KindOf(err), "%v", err)
	assert.ErrorContains(t, err, "mixes interruptible and non-interruptible")

	block := reservedRequest(ReservationTypeCapacityBlock)
	block.Overrides[0].Interruptible, block.Overrides[1].Interruptible = true, true
	_, err = New(&fakeEC2{}, "demo").Launch(context.Background(), block)
	assert.Equal(t, KindInvalidRequest, KindOf(err), "%v", err)
}

func TestInstanceInAnInterruptibleReservation(t *testing.T) {
	inst := fromEC2(ec2types.Instance{InstanceId: aws.String("i-1"), CapacityReservationId: aws.String("cr-1"),
		InstanceLifecycle: ec2types.InstanceLifecycleTypeInterruptibleCapacityReservation})
	assert.True(t, inst.InterruptibleReservation)
	assert.Equal(t, "cr-1", inst.CapacityReservationID)
	assert.False(t, fromEC2(ec2types.Instance{InstanceId: aws.String("i-2"), CapacityReservationId: aws.String("cr-1")}).InterruptibleReservation)
}
