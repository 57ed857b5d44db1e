package termination

import (
	"context"
	"fmt"
	"strings"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

// decide records a decision about the claim: one per termination step (Draining, DrainBlocked, Drained,
// Terminating, Deleted), under "nodeclaim/<name>".
func (s *Service) decide(ctx context.Context, claim, kind string, req Request, message string, details map[string]string) error {
	err := s.deps.Store.RecordDecision(ctx, state.Decision{
		Subject: "nodeclaim/" + claim,
		ID:      fmt.Sprintf("termination-%s-%d", strings.ToLower(kind), max(req.Attempt, 1)),
		Kind:    kind,
		Reason:  req.Reason,
		Message: message,
		Details: details,
		At:      s.deps.Now().UTC(),
	})
	if err != nil {
		return fmt.Errorf("recording the %s decision for claim %s: %w", kind, claim, err)
	}
	return nil
}
