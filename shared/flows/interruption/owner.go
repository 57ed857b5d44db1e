package interruption

import (
	"context"
	"fmt"
	"time"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// InstanceOwners says, from EC2, whose an instance is; *instance.Launcher satisfies it.
type InstanceOwners interface {
	OwnerOf(ctx context.Context, id string) (instance.Ownership, error)
}

var _ InstanceOwners = (*instance.Launcher)(nil)

// GoneReasons gives EC2's state reason code and message for each of ids that is shutting down or
// terminated; *instance.Launcher satisfies it.
type GoneReasons interface {
	GoneReasons(ctx context.Context, ids []string) (codes, messages map[string]string, err error)
}

var _ GoneReasons = (*instance.Launcher)(nil)

// unknownInstanceGrace is how long after its event an instance EC2 does not know yet is taken for a
// launch EC2 has not caught up with, rather than for someone else's instance.
const unknownInstanceGrace = 2 * time.Minute

// errNotRecordedYet says an instance is the cluster's but its claim does not name it yet (the launch is
// still recording it); the message is tried again, never acknowledged as someone else's.
type errNotRecordedYet struct{ instance, why string }

func (e *errNotRecordedYet) Error() string {
	return fmt.Sprintf("instance %s: %s; tried again", e.instance, e.why)
}

// claimOf finds the claim of an instance a notice names; ok is false when the instance is not ours.
// The state table's instance index is eventually consistent: a claim that recorded its instance a moment
// ago may not be in it yet, and a launch records the instance only after EC2 started it. So a miss is
// checked with EC2: an instance tagged as this cluster's is looked up by its claim tag with a consistent
// read, and one whose claim does not name it yet is an error (the message is retried), not "not ours".
func (s *Service) claimOf(ctx context.Context, msgTime time.Time, id string) (state.Claim, bool, error) {
	c, err := s.deps.State.ClaimByInstance(ctx, id)
	if err == nil || !state.IsNotFound(err) {
		return c, err == nil, err
	}
	if s.deps.Instances == nil {
		return state.Claim{}, false, nil
	}
	owner, err := s.deps.Instances.OwnerOf(ctx, id)
	if err != nil {
		return state.Claim{}, false, fmt.Errorf("asking EC2 whose instance %s is: %w", id, err)
	}
	switch {
	case !owner.Known && s.deps.Now().Sub(msgTime) < unknownInstanceGrace:
		return state.Claim{}, false, &errNotRecordedYet{instance: id, why: "EC2 does not know it yet"}
	case !owner.Known || !owner.Ours:
		return state.Claim{}, false, nil
	case owner.Claim == "":
		return state.Claim{}, false, &errNotRecordedYet{instance: id, why: "it is this cluster's but not tagged with its claim yet"}
	}
	c, err = s.deps.State.GetClaim(ctx, owner.Claim)
	if state.IsNotFound(err) {
		// A claim is recorded before its launch; one that is gone was removed, and its instance with it.
		return state.Claim{}, false, nil
	}
	if err != nil {
		return state.Claim{}, false, err
	}
	switch c.InstanceID {
	case id:
		return c, true, nil
	case "":
		return state.Claim{}, false, &errNotRecordedYet{instance: id, why: "claim " + c.Name + " has not recorded it yet"}
	}
	// The claim stands for another instance: this one is a leftover the lifecycle's sweep terminates.
	return state.Claim{}, false, nil
}
