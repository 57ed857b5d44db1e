package interruption

import (
	"context"
	"fmt"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// markLaunchFailed handles a booting claim whose instance went before its Node registered. The notice
// does not say why, so EC2's state reason is asked (Reasons): only an instance EC2 terminated while
// launching it (instance.DiedAtLaunch: a volume key it may not use, a snapshot gone) is a failed launch,
// whose offering stays out of the solves for state.DiedAtLaunchTTL and which counts toward its
// EC2NodeClass's launch back-off (state.ClassBackoff). One a user or a script terminated says nothing
// about the class: counted, it would hold every launch of the class back for minutes. When EC2 no longer
// knows the instance, or no Reasons is wired, the notice is taken as a failed launch without a code.
func (s *Service) markLaunchFailed(ctx context.Context, c state.Claim) (state.Claim, string, error) {
	if c.InstanceType == "" || c.Zone == "" {
		return c, "", nil
	}
	code, message := "", "EC2 terminated the instance before its Node registered (state-change notice)"
	if s.deps.Reasons != nil {
		codes, messages, err := s.deps.Reasons.GoneReasons(ctx, []string{c.InstanceID})
		if err != nil {
			return c, "", fmt.Errorf("reading why instance %s went: %w", c.InstanceID, err)
		}
		if got, known := codes[c.InstanceID]; known {
			if !instance.DiedAtLaunch(got) {
				return c, fmt.Sprintf("instance %s went before its Node registered (%s: %s): not a failed launch",
					c.InstanceID, got, messages[c.InstanceID]), nil
			}
			code, message = got, messages[c.InstanceID]
		}
	}
	o := state.Offering{InstanceType: c.InstanceType, Zone: c.Zone, CapacityType: c.CapacityType}
	if err := s.deps.State.MarkUnavailable(ctx, o, "InstanceDiedAtLaunch", state.DiedAtLaunchTTL); err != nil {
		return c, "", err
	}
	note := fmt.Sprintf("instance %s terminated before its Node registered: the launch failed; offering %s marked unavailable for %s",
		c.InstanceID, o, state.DiedAtLaunchTTL)
	if c.NodeClass == "" {
		return c, note, nil
	}
	f := state.LaunchFailure{InstanceID: c.InstanceID, At: s.deps.Now(), SpecHash: c.NodeClassHash, Code: code, Message: message}
	if _, err := s.deps.State.RecordLaunchFailure(ctx, c.NodeClass, f); err != nil {
		return c, "", err
	}
	return c, note + "; the failure counts toward EC2NodeClass " + c.NodeClass + "'s launch back-off", nil
}
