package termination

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

// One chain per claim. A request and its re-drives are one chain: each delivery that does not finish
// sends the next. Requests for a claim whose chain is still under way are normal — the lifecycle sends a
// stalled drain again (stalled.go there), a consolidation sends a hand-over again, an interruption notice
// arrives for a draining claim — and each would start a chain of its own that lives as long as the drain,
// so a drain blocked for hours would be looked at by more and more chains. The newest chain wins: the
// first re-drive of a new request names a new chain and records it on the claim (TerminationChain); a
// re-drive of any other chain finds that and ends. Nothing of an ended chain is lost: its deadline is the
// claim's GoneBy, its reason the claim's DisruptionReason, and every step is idempotent per claim.

// superseded reports whether the delivery belongs to an older chain than the claim's current one.
func superseded(claim state.Claim, req Request) bool {
	return req.Chain != "" && claim.TerminationChain != "" && req.Chain != claim.TerminationChain
}

// errChainGone abandons recording a chain on a claim that was deleted meanwhile.
var errChainGone = errors.New("claim deleted")

// chainOf is the chain the re-drive of req belongs to: req's own, or, for a request that starts one, a
// new chain recorded on the claim first (so the chain it supersedes ends at its next delivery).
func (s *Service) chainOf(ctx context.Context, req Request) (string, error) {
	if req.Chain != "" {
		return req.Chain, nil
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("naming the termination chain of claim %s: %w", req.Claim, err)
	}
	chain := hex.EncodeToString(b[:])
	_, err := s.deps.Store.UpdateClaim(ctx, req.Claim, func(c *state.Claim) error {
		if c.Lifecycle == state.Deleted {
			return errChainGone
		}
		c.TerminationChain = chain
		return nil
	})
	if err != nil && !errors.Is(err, errChainGone) {
		return "", fmt.Errorf("recording the termination chain of claim %s: %w", req.Claim, err)
	}
	return chain, nil
}
