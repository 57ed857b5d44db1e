package interruption

import (
	"context"
	"strings"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/flows/interruption/messages"
)

// DecisionKind is the kind of the decision records the service writes, one per step it carries out.
const DecisionKind = "Interruption"

// progressLookback is how many of a claim's newest decision records are read to find the steps an
// earlier delivery of the same event already carried out; one event writes at most seven.
const progressLookback = 100

// decisionID names the record of one step for one event: the record doubles as the step's completion
// marker, so a redelivered event skips the steps it already finished.
func decisionID(eventID string, step Step) string { return eventID + "/" + string(step) }

// ClaimSubject is the decision-record subject of a claim.
func ClaimSubject(claim string) string { return "nodeclaim/" + claim }

// stepsDone returns the steps already recorded for the event on the claim.
func (s *Service) stepsDone(ctx context.Context, claim, eventID string) (map[Step]bool, error) {
	records, err := s.deps.State.Decisions(ctx, ClaimSubject(claim), progressLookback)
	if err != nil {
		return nil, err
	}
	done := map[Step]bool{}
	for _, d := range records {
		if d.Kind != DecisionKind {
			continue
		}
		if step, ok := strings.CutPrefix(d.ID, eventID+"/"); ok {
			done[Step(step)] = true
		}
	}
	return done, nil
}

// record writes the decision record of a step that was carried out.
func (s *Service) record(ctx context.Context, msg messages.Message, d Decision, step Step, note string) error {
	details := map[string]string{"eventId": msg.EventID(), "instanceId": d.Instance, "step": string(step),
		"kind": msg.Kind().String()}
	if !d.Deadline.IsZero() {
		details["deadline"] = d.Deadline.UTC().Format("2006-01-02T15:04:05Z07:00")
	}
	return s.deps.State.RecordDecision(ctx, state.Decision{Subject: ClaimSubject(d.Claim), ID: decisionID(msg.EventID(), step),
		Kind: DecisionKind, Reason: string(EventReason(msg.Kind())), Message: note, Details: details,
		At: s.deps.Now().UTC()})
}
