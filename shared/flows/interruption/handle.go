package interruption

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/flows/interruption/messages"
)

// ErrInProgress says another invocation holds the event right now; the message is retried after that
// invocation's processing window, so a crash there never loses the event.
var ErrInProgress = errors.New("the event is being processed by another invocation")

// handle carries out one parsed message and returns the claims it disrupted. A nil error acknowledges
// the message; an error makes it a batch item failure (every error here is transient).
func (s *Service) handle(ctx context.Context, sqsID string, msg messages.Message) ([]Disruption, error) {
	log := s.deps.Log.With("messageId", sqsID, "eventId", msg.EventID(), "kind", msg.Kind().String())
	if noop, ok := msg.(messages.NoOp); ok {
		log.InfoContext(ctx, "interruption message asks for nothing; acknowledged", "reason", noop.Reason)
		return nil, nil
	}
	owner := fmt.Sprintf("%s@%d", sqsID, s.deps.Now().UnixNano())
	outcome, err := s.deps.State.BeginEvent(ctx, DedupeScope, msg.EventID(), owner, s.processingWindow(ctx))
	if err != nil {
		log.ErrorContext(ctx, "interruption message failed; SQS redelivers it", "error", err.Error())
		return nil, err
	}
	switch outcome {
	case state.Done:
		log.InfoContext(ctx, "duplicate interruption message; already handled, acknowledged")
		return nil, nil
	case state.InProgress:
		log.InfoContext(ctx, "interruption message is being handled by another invocation; SQS redelivers it")
		return nil, ErrInProgress
	}
	acted, disrupted, err := s.process(ctx, msg)
	if err == nil {
		err = s.deps.State.CompleteEvent(ctx, DedupeScope, msg.EventID(), s.cfg.DedupeWindow)
	}
	if err != nil {
		// Give the claim back, so a retry (here or on redelivery) need not wait for the processing window.
		if rerr := s.deps.State.ReleaseEvent(ctx, DedupeScope, msg.EventID(), owner); rerr != nil {
			log.WarnContext(ctx, "releasing the event failed; a retry waits for the processing window", "error", rerr.Error())
		}
		log.ErrorContext(ctx, "interruption message failed; it is tried again and finished steps are not repeated",
			"steps", acted, "error", err.Error())
		return disrupted, err // what it disrupted before failing is not disrupted again on retry
	}
	if len(acted) == 0 {
		log.InfoContext(ctx, "interruption message names no claim that needs action; acknowledged",
			"instances", msg.InstanceIDs())
		return nil, nil
	}
	log.InfoContext(ctx, "interruption message handled", "steps", acted)
	return disrupted, nil
}

// process finds the claims of the message's instances, decides and carries out the steps not done yet.
// It returns what it did, as "claim/step" strings, and the claims it took out of service.
func (s *Service) process(ctx context.Context, msg messages.Message) ([]string, []Disruption, error) {
	records := map[string]state.Claim{}
	claims := map[string]Claim{}
	done := map[string]map[Step]bool{}
	for _, id := range msg.InstanceIDs() {
		c, ours, err := s.claimOf(ctx, msg.StartTime(), id)
		if err != nil {
			return nil, nil, err
		}
		if !ours {
			continue
		}
		steps, err := s.stepsDone(ctx, c.Name, msg.EventID())
		if err != nil {
			return nil, nil, err
		}
		records[id], done[c.Name] = c, steps
		claims[id] = toClaim(c, steps)
	}
	var acted []string
	var disrupted []Disruption
	for _, d := range Decide(msg, claims, s.cfg.Rebalance) {
		// The MarkDisrupted step's Event waits for the replacement request (announceDisrupted): it is
		// published after LaunchReplacement, or after the decision's last step when there is none, or
		// when a step fails.
		var announce *state.Claim
		flush := func() {
			if announce != nil {
				s.announceDisrupted(ctx, msg, d, *announce)
				announce = nil
			}
		}
		for _, step := range d.Steps {
			if done[d.Claim][step] {
				continue
			}
			before := records[d.Instance]
			c, note, err := s.act(ctx, msg, d, before, step)
			if err != nil {
				flush()
				return acted, disrupted, fmt.Errorf("%s of claim %s for event %s: %w", step, d.Claim, msg.EventID(), err)
			}
			switch step {
			case MarkDisrupted:
				announce = &c
			case LaunchReplacement:
				flush()
			}
			if before.Lifecycle.InService() && !c.Lifecycle.InService() {
				disrupted = append(disrupted, Disruption{NodePool: c.NodePool, Reason: c.DisruptionReason, CapacityType: c.CapacityType})
			}
			records[d.Instance] = c
			if note == "" {
				continue // nothing to do and nothing to record
			}
			if err := s.record(ctx, msg, d, step, note); err != nil {
				flush()
				return acted, disrupted, err
			}
			acted = append(acted, d.Claim+"/"+string(step))
		}
		flush()
	}
	return acted, disrupted, nil
}

// toClaim is what Decide needs to know of a claim record. A claim already draining or terminating
// because of this very event (its MarkDisrupted step is recorded) counts as running, so a redelivery
// after a crash resumes the steps that were left, instead of deciding nothing.
func toClaim(c state.Claim, done map[Step]bool) Claim {
	out := Claim{Name: c.Name, InstanceID: c.InstanceID, CapacityType: c.CapacityType, InstanceType: c.InstanceType,
		Zone: c.Zone, Phase: Running, Booting: c.Lifecycle == state.Launched,
		ReservationID: cmp.Or(c.Labels[apis.LabelCapacityReservationID], c.ReservationID)}
	if c.GoneBy != nil {
		out.GoneBy = *c.GoneBy
	}
	switch c.Lifecycle {
	case state.Draining:
		out.Phase = Disrupted
	case state.Terminating, state.Deleted:
		out.Phase = Terminating
	}
	if done[MarkDisrupted] {
		out.Phase = Running
	}
	return out
}

// logParseError logs a message that cannot be parsed; it is acknowledged, never retried.
func (s *Service) logParseError(ctx context.Context, r Result) {
	level, what := slog.LevelWarn, "malformed interruption message; acknowledged"
	var malformed *messages.MalformedError
	if errors.As(r.Err, &malformed) {
		s.deps.Log.Log(ctx, level, what, "messageId", r.MessageID, "eventId", malformed.EventID,
			"field", malformed.Field, "reason", malformed.Reason)
		return
	}
	if messages.IsUnknownKind(r.Err) {
		level, what = slog.LevelInfo, "interruption message of a kind Nodewright does not handle; acknowledged"
	}
	s.deps.Log.Log(ctx, level, what, "messageId", r.MessageID, "reason", r.Err.Error())
}
