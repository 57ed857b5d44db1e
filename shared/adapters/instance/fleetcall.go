package instance

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
)

// createFleet asks EC2 for the fleet in. When the call fails in a way that leaves open whether the fleet
// started instances (a server error or a lost answer, after the SDK's own retries with the same
// ClientToken; see Answered), it looks for what the call may have started (find: by the claim's or the
// batch's tag) and returns that as found, with the error that led to the look-up. Finding nothing, it asks
// once more with the same ClientToken: EC2 answers a repeated token with the first call's fleet, so this
// call cannot launch twice even if the look-up missed an instance too new to be listed; moto, which ignores
// the token, lists the first call's instances at once. An error of that second call that still leaves the
// outcome open is returned as it is: the caller keeps its claims pending, and reconciliation adopts their
// instances by tag or forgets the claims after the launch timeout.
func (l *Launcher) createFleet(ctx context.Context, in *ec2.CreateFleetInput, what string,
	find func(context.Context) ([]Instance, error)) (out *ec2.CreateFleetOutput, found []Instance, err error) {
	out, err = l.ec2.CreateFleet(ctx, in)
	if err == nil {
		return out, nil, nil
	}
	err = fromAPIError(what, err)
	if Answered(err) || ctx.Err() != nil {
		return nil, nil, err
	}
	found, ferr := find(ctx)
	if ferr != nil {
		// The look-up's own error must not stand for the fleet's outcome, so only its text is kept.
		return nil, nil, fmt.Errorf("%w (looking for the instances it may have started: %v)", err, ferr)
	}
	if len(found) > 0 {
		return nil, found, err
	}
	out, err = l.ec2.CreateFleet(ctx, in)
	if err != nil {
		return nil, nil, fromAPIError(what+" (asked again with the same token)", err)
	}
	return out, nil, nil
}
