package instance

import (
	"context"
	"fmt"
	"slices"

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
		{Name: aws.String("tag:" + TagCluster), Values: []string{l.cluster}},
		{Name: aws.String("instance-state-name"), Values: liveStates},
	})
	if err != nil || len(found) == 0 {
		return Instance{}, false, err
	}
	return found[0], true, nil
}

// List returns every live instance Nodewright launched for the cluster (for garbage collection): those
// tagged nodewright.sh/cluster=<cluster>. Karpenter's and a managed node group's instances, which carry
// only the tags they share with Nodewright's (kubernetes.io/cluster/<cluster>), are never listed.
func (l *Launcher) List(ctx context.Context) ([]Instance, error) {
	return l.list(ctx, []ec2types.Filter{
		{Name: aws.String("tag:" + TagCluster), Values: []string{l.cluster}},
		{Name: aws.String("instance-state-name"), Values: liveStates},
	})
}

// LiveByID returns those of ids whose instances are still live, asking EC2 by id: a check that does not
// depend on a list read earlier (which a launch may have outrun). An id EC2 does not know is not returned.
func (l *Launcher) LiveByID(ctx context.Context, ids []string) ([]Instance, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	found, err := l.byID(ctx, ids)
	if notFound(err) && len(ids) > 1 {
		// One unknown id fails the whole call: ask for each on its own.
		found = nil
		for _, id := range ids {
			one, err := l.byID(ctx, []string{id})
			if err != nil && !notFound(err) {
				return nil, fromAPIError("describing "+id, err)
			}
			found = append(found, one...)
		}
		return found, nil
	}
	if err != nil && !notFound(err) {
		return nil, fromAPIError("describing instances by id", err)
	}
	return found, nil
}

// byID describes ids and keeps the live ones; the error is EC2's, unwrapped.
func (l *Launcher) byID(ctx context.Context, ids []string) ([]Instance, error) {
	var out []Instance
	pager := ec2.NewDescribeInstancesPaginator(l.ec2, &ec2.DescribeInstancesInput{InstanceIds: ids})
	for pager.HasMorePages() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, r := range page.Reservations {
			for _, i := range r.Instances {
				if inst := fromEC2(i); slices.Contains(liveStates, inst.State) {
					out = append(out, inst)
				}
			}
		}
	}
	return out, nil
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
		CapacityReservationID: aws.ToString(i.CapacityReservationId), SubnetID: aws.ToString(i.SubnetId),
	}
	for _, g := range i.SecurityGroups {
		inst.SecurityGroupIDs = append(inst.SecurityGroupIDs, aws.ToString(g.GroupId))
	}
	slices.Sort(inst.SecurityGroupIDs)
	if i.Placement != nil {
		inst.Zone = aws.ToString(i.Placement.AvailabilityZone)
	}
	if i.State != nil {
		inst.State = string(i.State.Name)
	}
	switch i.InstanceLifecycle {
	case ec2types.InstanceLifecycleTypeSpot:
		inst.CapacityType = CapacityTypeSpot
	case ec2types.InstanceLifecycleTypeInterruptibleCapacityReservation:
		inst.InterruptibleReservation = true
	}
	for _, t := range i.Tags {
		inst.Tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return inst
}
