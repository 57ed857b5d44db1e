package instance

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// Terminated reports whether EC2 says the instance is terminated, or no longer knows it: only then is
// nothing of it running any more. An instance shutting down may still run its pods for a while, so it is
// not terminated yet. It reads the instance by id and changes nothing.
func (l *Launcher) Terminated(ctx context.Context, id string) (bool, error) {
	out, err := l.ec2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	if notFound(err) {
		return true, nil
	}
	if err != nil {
		return false, fromAPIError("describing "+id, err)
	}
	for _, r := range out.Reservations {
		for _, i := range r.Instances {
			return i.State != nil && i.State.Name == ec2types.InstanceStateNameTerminated, nil
		}
	}
	return true, nil
}
