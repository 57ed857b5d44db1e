package instance

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// NotFoundGrace is how long after its launch EC2 may still answer InvalidInstanceID.NotFound for an
// instance it has started: DescribeInstances is eventually consistent, so within that time "not found"
// says nothing about whether the instance runs.
const NotFoundGrace = 5 * time.Minute

// Terminated reports whether EC2 says the instance is terminated, or no longer knows it: only then is
// nothing of it running any more. An instance shutting down may still run its pods for a while, so it is
// not terminated yet; nor is one EC2 does not know within NotFoundGrace of launchedAt (zero: launched long
// ago), since a fresh instance may not be visible yet. It reads the instance by id and changes nothing.
func (l *Launcher) Terminated(ctx context.Context, id string, launchedAt time.Time) (bool, error) {
	out, err := l.ec2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	if notFound(err) {
		return launchedAt.IsZero() || l.now().Sub(launchedAt) >= NotFoundGrace, nil
	}
	if err != nil {
		return false, fromAPIError("describing "+id, err)
	}
	for _, r := range out.Reservations {
		for _, i := range r.Instances {
			return i.State != nil && i.State.Name == ec2types.InstanceStateNameTerminated, nil
		}
	}
	return launchedAt.IsZero() || l.now().Sub(launchedAt) >= NotFoundGrace, nil
}
