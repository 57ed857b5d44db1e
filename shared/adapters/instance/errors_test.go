package instance

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeEC2 answers CreateFleet with a canned result and records the input; it finds no existing instance.
type fakeEC2 struct {
	out  *ec2.CreateFleetOutput
	err  error
	last *ec2.CreateFleetInput
	// tagged records CreateTags: instance id → claim tag. A batch tags concurrently: mu guards it.
	mu     sync.Mutex
	tagged map[string]string
}

func (f *fakeEC2) CreateTags(_ context.Context, in *ec2.CreateTagsInput, _ ...func(*ec2.Options)) (*ec2.CreateTagsOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.tagged == nil {
		f.tagged = map[string]string{}
	}
	for _, id := range in.Resources {
		for _, t := range in.Tags {
			if aws.ToString(t.Key) == TagNodeClaim {
				f.tagged[id] = aws.ToString(t.Value)
			}
		}
	}
	return &ec2.CreateTagsOutput{}, nil
}

func (f *fakeEC2) CreateFleet(_ context.Context, in *ec2.CreateFleetInput, _ ...func(*ec2.Options)) (*ec2.CreateFleetOutput, error) {
	f.last = in
	return f.out, f.err
}

func (f *fakeEC2) TerminateInstances(context.Context, *ec2.TerminateInstancesInput, ...func(*ec2.Options)) (*ec2.TerminateInstancesOutput, error) {
	return &ec2.TerminateInstancesOutput{}, nil
}

func (f *fakeEC2) DescribeInstances(context.Context, *ec2.DescribeInstancesInput, ...func(*ec2.Options)) (*ec2.DescribeInstancesOutput, error) {
	return &ec2.DescribeInstancesOutput{}, nil
}

func fleetError(code, instanceType, subnet string) ec2types.CreateFleetError {
	return ec2types.CreateFleetError{ErrorCode: aws.String(code), ErrorMessage: aws.String(code + " happened"),
		LaunchTemplateAndOverrides: &ec2types.LaunchTemplateAndOverridesResponse{Overrides: &ec2types.FleetLaunchTemplateOverrides{
			InstanceType: ec2types.InstanceType(instanceType), SubnetId: aws.String(subnet)}}}
}

func request() Request {
	return Request{Cluster: "demo", Claim: "default-abc", NodePool: "default", NodeClass: "default", CapacityType: CapacityTypeSpot,
		Overrides: []Override{
			{InstanceType: "m5.large", Zone: "us-east-1a", SubnetID: "subnet-a", LaunchTemplate: "lt-1", Price: 0.05},
			{InstanceType: "m6i.large", Zone: "us-east-1b", SubnetID: "subnet-b", LaunchTemplate: "lt-2", Price: 0.04},
			{InstanceType: "c5.large", Zone: "us-east-1a", SubnetID: "subnet-a", LaunchTemplate: "lt-1", Price: 0.03},
		}}
}

func TestAllCapacityErrorsListTheOfferingsToMarkUnavailable(t *testing.T) {
	f := &fakeEC2{out: &ec2.CreateFleetOutput{Errors: []ec2types.CreateFleetError{
		fleetError("InsufficientInstanceCapacity", "m5.large", "subnet-a"),
		fleetError("UnfulfillableCapacity", "m6i.large", "subnet-b"),
	}}}
	_, err := New(f, "demo").Launch(context.Background(), request())
	require.True(t, IsInsufficientCapacity(err), "got %v", err)
	var ice *InsufficientCapacityError
	require.ErrorAs(t, err, &ice)
	assert.Equal(t, []Offering{
		{InstanceType: "m5.large", Zone: "us-east-1a", CapacityType: "spot"},
		{InstanceType: "m6i.large", Zone: "us-east-1b", CapacityType: "spot"},
	}, ice.Offerings, "zones come from the subnets the overrides named")
	assert.Equal(t, []string{"InsufficientInstanceCapacity", "UnfulfillableCapacity"}, ice.Codes)
}

func TestPerOfferingRefusalsNameTheOfferingsToDrop(t *testing.T) {
	f := &fakeEC2{out: &ec2.CreateFleetOutput{Errors: []ec2types.CreateFleetError{
		fleetError("InsufficientInstanceCapacity", "m5.large", "subnet-a"),
		fleetError("InvalidLaunchTemplateName.NotFoundException", "c5.large", "subnet-a"),
		fleetError("InvalidParameterValue", "m6i.large", "subnet-b"),
	}}}
	_, err := New(f, "demo").Launch(context.Background(), request())
	var oe *OfferingsError
	require.ErrorAs(t, err, &oe)
	assert.True(t, Answered(err))
	require.NotNil(t, oe.NoCapacity)
	assert.Equal(t, []Offering{{"m5.large", "us-east-1a", "spot"}}, oe.NoCapacity.Offerings)
	assert.Equal(t, []RejectedOffering{
		{Offering: Offering{"c5.large", "us-east-1a", "spot"}, Kind: KindLaunchTemplateNotFound,
			Code: "InvalidLaunchTemplateName.NotFoundException", Message: "InvalidLaunchTemplateName.NotFoundException happened"},
		{Offering: Offering{"m6i.large", "us-east-1b", "spot"}, Kind: KindInvalidRequest,
			Code: "InvalidParameterValue", Message: "InvalidParameterValue happened"},
	}, oe.Rejected)
	assert.Len(t, oe.Offerings(), 3)
	assert.False(t, IsInsufficientCapacity(err), "not every offering lacked capacity")

	f.out.Errors = f.out.Errors[2:]
	_, err = New(f, "demo").Launch(context.Background(), request())
	require.ErrorAs(t, err, &oe)
	assert.Nil(t, oe.NoCapacity, "no capacity error, no cache entry")
}

func TestARequestWideFleetErrorIsClassified(t *testing.T) {
	f := &fakeEC2{out: &ec2.CreateFleetOutput{Errors: []ec2types.CreateFleetError{
		fleetError("InsufficientInstanceCapacity", "m5.large", "subnet-a"),
		{ErrorCode: aws.String("UnauthorizedOperation"), ErrorMessage: aws.String("not allowed")},
	}}}
	_, err := New(f, "demo").Launch(context.Background(), request())
	assert.Equal(t, KindUnauthorized, KindOf(err))
	assert.True(t, KindOf(err).NeverSucceeds())
	assert.True(t, Answered(err))
}

// TestOnlyAnswersAreDefinite: EC2's refusals (documented codes, fleet errors) say nothing started; a server
// error, a code not known as a refusal, a transport error or a timeout leave it open.
func TestOnlyAnswersAreDefinite(t *testing.T) {
	for name, tc := range map[string]struct {
		err      error
		answered bool
	}{
		"throttled":         {&smithy.GenericAPIError{Code: "RequestLimitExceeded"}, true},
		"server error":      {&smithy.GenericAPIError{Code: "InternalError"}, false},
		"unknown code":      {&smithy.GenericAPIError{Code: "SomethingNew"}, false},
		"unauthorized":      {&smithy.GenericAPIError{Code: "UnauthorizedOperation"}, true},
		"connection reset":  {errors.New("read tcp 10.0.0.1:443: connection reset by peer"), false},
		"deadline exceeded": {context.DeadlineExceeded, false},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := New(&fakeEC2{err: tc.err}, "demo").Launch(context.Background(), request())
			require.Error(t, err)
			assert.Equal(t, tc.answered, Answered(err), "%v", err)
		})
	}
	_, err := New(&fakeEC2{}, "demo").Launch(context.Background(), Request{Cluster: "demo"})
	assert.True(t, Answered(err), "a request refused before it was sent started nothing")
}

func TestAPIErrorsAreClassified(t *testing.T) {
	cases := map[string]ErrorKind{
		"RequestLimitExceeded":  KindThrottled,
		"UnauthorizedOperation": KindUnauthorized,
		"InstanceLimitExceeded": KindQuota,
		"InternalError":         KindServerError,
		"ServiceUnavailable":    KindServerError,
		"SomethingNew":          KindServerError,
		"InvalidParameterValue": KindInvalidRequest,
	}
	for code, kind := range cases {
		t.Run(code, func(t *testing.T) {
			f := &fakeEC2{err: &smithy.GenericAPIError{Code: code, Message: "no"}}
			_, err := New(f, "demo").Launch(context.Background(), request())
			assert.Equal(t, kind, KindOf(err), "%v", err)
		})
	}
}

func TestFleetShape(t *testing.T) {
	f := &fakeEC2{out: &ec2.CreateFleetOutput{Errors: []ec2types.CreateFleetError{fleetError("InsufficientInstanceCapacity", "c5.large", "subnet-a")}}}
	_, _ = New(f, "demo").Launch(context.Background(), request())
	in := f.last
	require.NotNil(t, in)
	assert.Equal(t, "default-abc", aws.ToString(in.ClientToken), "the claim name is the idempotency token")
	assert.Equal(t, ec2types.FleetTypeInstant, in.Type)
	assert.EqualValues(t, 1, aws.ToInt32(in.TargetCapacitySpecification.TotalTargetCapacity))
	assert.Equal(t, ec2types.SpotAllocationStrategyPriceCapacityOptimized, in.SpotOptions.AllocationStrategy)
	assert.Nil(t, in.OnDemandOptions)
	require.Len(t, in.LaunchTemplateConfigs, 2, "one config per launch template")
	assert.Equal(t, "lt-1", aws.ToString(in.LaunchTemplateConfigs[0].LaunchTemplateSpecification.LaunchTemplateName), "the template of the cheapest override first")
	assert.Equal(t, ec2types.InstanceType("c5.large"), in.LaunchTemplateConfigs[0].Overrides[0].InstanceType)
	assert.Len(t, in.TagSpecifications, 3, "instance, volume and fleet are tagged")

	req := request()
	req.CapacityType = CapacityTypeOnDemand
	_, _ = New(f, "demo").Launch(context.Background(), req)
	assert.Equal(t, ec2types.FleetOnDemandAllocationStrategyLowestPrice, f.last.OnDemandOptions.AllocationStrategy)
}

func TestInvalidRequestsNeverReachEC2(t *testing.T) {
	many := request()
	many.Overrides = nil
	for i := 0; i < 61; i++ {
		many.Overrides = append(many.Overrides, Override{InstanceType: fmt.Sprintf("m%d.large", i), Zone: "us-east-1a", SubnetID: "s", LaunchTemplate: "lt"})
	}
	reserved := request()
	reserved.CapacityType = "reserved"
	for name, req := range map[string]Request{"61 types": many, "unknown capacity type": reserved, "no claim": {Cluster: "demo"}} {
		t.Run(name, func(t *testing.T) {
			f := &fakeEC2{}
			_, err := New(f, "demo").Launch(context.Background(), req)
			assert.Equal(t, KindInvalidRequest, KindOf(err))
			assert.Nil(t, f.last, "EC2 was not called")
		})
	}
}
