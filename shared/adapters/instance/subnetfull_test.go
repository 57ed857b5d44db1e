package instance

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A full subnet is the subnet's failure, not the offering's: before, InsufficientFreeAddressesInSubnet
// listed the override's type and zone among the offerings without capacity, which took the zone out for
// three minutes although its other subnets had addresses.
func TestAFullSubnetNamesTheSubnetNotTheOffering(t *testing.T) {
	f := &fakeEC2{out: &ec2.CreateFleetOutput{Errors: []ec2types.CreateFleetError{
		fleetError(CodeInsufficientFreeAddresses, "m5.large", "subnet-a"),
		fleetError(CodeInsufficientFreeAddresses, "c5.large", "subnet-a"),
		fleetError("InsufficientInstanceCapacity", "m6i.large", "subnet-b"),
	}}}
	_, err := New(f, "demo").Launch(context.Background(), request())
	var ice *InsufficientCapacityError
	require.ErrorAs(t, err, &ice)
	assert.Equal(t, []Offering{{InstanceType: "m6i.large", Zone: "us-east-1b", CapacityType: "spot"}}, ice.Offerings,
		"only the offering that lacked capacity")
	assert.Equal(t, []ExhaustedSubnet{{SubnetID: "subnet-a", Zone: "us-east-1a"}}, ice.Subnets, "the full subnet, once")
	assert.Equal(t, []string{CodeInsufficientFreeAddresses, "InsufficientInstanceCapacity"}, ice.Codes)
	assert.Contains(t, err.Error(), "subnet subnet-a (us-east-1a) had no free IP address (InsufficientFreeAddressesInSubnet)")
	assert.True(t, Answered(err))
}

func TestALaunchReportsTheFullSubnetsItPassed(t *testing.T) {
	f := &fakeEC2{out: &ec2.CreateFleetOutput{
		Errors:    []ec2types.CreateFleetError{fleetError(CodeInsufficientFreeAddresses, "c5.large", "subnet-a")},
		Instances: []ec2types.CreateFleetInstance{{InstanceIds: []string{"i-0abc"}, InstanceType: ec2types.InstanceTypeM6iLarge}},
	}}
	inst, err := New(f, "demo").Launch(context.Background(), request())
	require.NoError(t, err)
	assert.Equal(t, []ExhaustedSubnet{{SubnetID: "subnet-a", Zone: "us-east-1a"}}, inst.ExhaustedSubnets)
	assert.Empty(t, inst.NoCapacity)
}

func TestWireFullSubnetIsASubnetMark(t *testing.T) {
	client, _ := newEC2Wire(t, map[string][]wireAnswer{
		"DescribeInstances": {{200, noInstances}},
		"CreateFleet": {{200, fleetXML(fleetErrorItem(CodeInsufficientFreeAddresses, "c5.large", "subnet-a")+
			fleetErrorItem(CodeInsufficientFreeAddresses, "m5.large", "subnet-a"), "")}},
	})
	_, err := New(client, "demo").Launch(context.Background(), request())
	var ice *InsufficientCapacityError
	require.ErrorAs(t, err, &ice)
	assert.Empty(t, ice.Offerings, "no offering is out for a full subnet")
	assert.Equal(t, []ExhaustedSubnet{{SubnetID: "subnet-a", Zone: "us-east-1a"}}, ice.Subnets)
}
