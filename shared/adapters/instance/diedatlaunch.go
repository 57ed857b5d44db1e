package instance

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
)

// diedAtLaunchCodes are the state reasons (StateReason.Code) of an instance EC2 terminated while starting
// it, after CreateFleet had answered: the launch failed, nobody asked for the termination.
var diedAtLaunchCodes = map[string]bool{
	"Client.InternalError":                true, // typically a volume key EC2 may not use for the launching role
	"Client.VolumeLimitExceeded":          true,
	"Client.InvalidSnapshot.NotFound":     true,
	"Server.InternalError":                true,
	"Server.InsufficientInstanceCapacity": true,
}

// DiedAtLaunch reports whether a state reason code says the instance was terminated by EC2 while it was
// being launched (a KMS key it may not use or that is disabled, a snapshot gone, no room after all),
// rather than by a user, by itself or by a spot interruption.
func DiedAtLaunch(code string) bool {
	return diedAtLaunchCodes[code] || strings.HasPrefix(code, "Client.InvalidKMSKey.")
}

// GoneReasons returns, for those of ids EC2 describes as shutting down or terminated, the code of the
// reason it gives (e.g. Client.InvalidKMSKey.InvalidState), and its message under the same id in
// messages. An id EC2 no longer knows is left out. It reads the instances by id and changes nothing.
func (l *Launcher) GoneReasons(ctx context.Context, ids []string) (codes, messages map[string]string, err error) {
	codes, messages = map[string]string{}, map[string]string{}
	if len(ids) == 0 {
		return codes, messages, nil
	}
	out, err := l.ec2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: ids})
	if notFound(err) && len(ids) > 1 {
		// One unknown id fails the whole call: ask for each on its own.
		for _, id := range ids {
			c, m, err := l.GoneReasons(ctx, []string{id})
			if err != nil {
				return nil, nil, err
			}
			for k, v := range c {
				codes[k], messages[k] = v, m[k]
			}
		}
		return codes, messages, nil
	}
	if notFound(err) {
		return codes, messages, nil
	}
	if err != nil {
		return nil, nil, fromAPIError("describing instances by id", err)
	}
	for _, r := range out.Reservations {
		for _, i := range r.Instances {
			if i.State == nil || (i.State.Name != "shutting-down" && i.State.Name != "terminated") || i.StateReason == nil {
				continue
			}
			id := aws.ToString(i.InstanceId)
			codes[id], messages[id] = aws.ToString(i.StateReason.Code), aws.ToString(i.StateReason.Message)
		}
	}
	return codes, messages, nil
}
