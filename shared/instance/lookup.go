package instance

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// liveStates are the states of an instance that still stands for its claim.
var liveStates = []string{"pending", "running", "stopping", "stopped"}

// FindByClaim returns the cluster's live instance tagged with claim, if there is one.
func (l *Launcher) FindByClaim(ctx context.Context, claim string) (Instance, bool, error) {
	found, err := l.list(ctx, []ec2types.Filter{
		{Name: aws.String("tag:" + TagNodeClaim), Values: []string{claim}},
		{Name: aws.String("tag:" + TagClusterName), Values: []string{l.cluster}},
		{Name: aws.String("instance-state-name"), Values: liveStates},
	})
	if err != nil || len(found) == 0 {
		return Instance{}, false, err
	}
	return found[0], true, nil
}

// List returns every live instance Nodewright launched for the cluster (for garbage collection).
func (l *Launcher) List(ctx context.Context) ([]Instance, error) {
	return l.list(ctx, []ec2types.Filter{
		{Name: aws.String("tag:" + TagClusterName), Values: []string{l.cluster}},
		{Name: aws.String("tag-key"), Values: []string{TagNodePool}},
		{Name: aws.String("instance-state-name"), Values: liveStates},
	})
}

// Terminate terminates an instance; one that is already gone is not an error.
func (l *Launcher) Terminate(ctx context.Context, id string) error {
	_, err := l.ec2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{id}})
	if err != nil && !notFound(err) {
		return fromAPIError("terminating "+id, err)
	}
	return nil
}

func (l *Launcher) describe(ctx context.Context, id string) (Instance, error) {
	out, err := l.ec2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	if err != nil {
		return Instance{}, fromAPIError("describing "+id, err)
	}
	for _, r := range out.Reservations {
		for _, i := range r.Instances {
			return fromEC2(i), nil
		}
	}
	return Instance{}, fmt.Errorf("describing %s: not found yet", id)
}

func (l *Launcher) list(ctx context.Context, filters []ec2types.Filter) ([]Instance, error) {
	var out []Instance
	pager := ec2.NewDescribeInstancesPaginator(l.ec2, &ec2.DescribeInstancesInput{Filters: filters})
	for pager.HasMorePages() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, fromAPIError("listing instances", err)
		}
		for _, r := range page.Reservations {
			for _, i := range r.Instances {
				out = append(out, fromEC2(i))
			}
		}
	}
	return out, nil
}

func fromEC2(i ec2types.Instance) Instance {
	inst := Instance{
		ID: aws.ToString(i.InstanceId), InstanceType: string(i.InstanceType), ImageID: aws.ToString(i.ImageId),
		LaunchTime: aws.ToTime(i.LaunchTime), Tags: map[string]string{}, CapacityType: CapacityTypeOnDemand,
		CapacityReservationID: aws.ToString(i.CapacityReservationId),
	}
	if i.Placement != nil {
		inst.Zone = aws.ToString(i.Placement.AvailabilityZone)
	}
	if i.State != nil {
		inst.State = string(i.State.Name)
	}
	if i.InstanceLifecycle == ec2types.InstanceLifecycleTypeSpot {
		inst.CapacityType = CapacityTypeSpot
	}
	for _, t := range i.Tags {
		inst.Tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return inst
}
