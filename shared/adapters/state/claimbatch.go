package state

import (
	"context"
	"fmt"
	"strings"
)

// MaxClaimsPerWrite is the most claims CreateClaims and PutClaims write at once. DynamoDB takes at most
// 100 actions in one TransactWriteItems, and a claim takes up to two (a create also checks that no
// deleted claim has the name; a move to deleted deletes the live item and writes the deleted one), plus
// one per shard for the change counters: 2×40 + ClaimShards ≤ 100.
const MaxClaimsPerWrite = 40

// maxTransactionBytes is DynamoDB's limit on the size of one TransactWriteItems.
const maxTransactionBytes = 4 << 20

// ClaimsError is a CreateClaims or PutClaims whose condition failed on some claims: names already taken
// (it wraps ErrAlreadyExists) or versions someone else moved (ErrConflict). Nothing was written.
type ClaimsError struct {
	// Names are the claims whose condition failed, in the order they were passed.
	Names []string
	op    string
	err   error
}

func (e *ClaimsError) Error() string {
	return fmt.Sprintf("%s claims %s: %v", e.op, strings.Join(e.Names, ", "), e.err)
}

func (e *ClaimsError) Unwrap() error { return e.err }

// CreateClaims writes new claim records (as CreateClaim does each) in one transaction: all of them or,
// when any name is taken, none (a *ClaimsError naming the taken ones). A batched launch records its
// claims with it, in one round trip instead of one per claim.
func (s *Store) CreateClaims(ctx context.Context, cs []Claim) ([]Claim, error) {
	if len(cs) > MaxClaimsPerWrite {
		return nil, fmt.Errorf("creating %d claims at once: at most %d: %w", len(cs), MaxClaimsPerWrite, ErrInvalid)
	}
	out := make([]Claim, len(cs))
	t := s.newOwnClaimTxn()
	for i, c := range cs {
		c, item, err := s.newClaimItem(c)
		if err != nil {
			return nil, err
		}
		out[i] = c
		t.create(i, c, item)
	}
	if err := s.markReplacements(ctx, out); err != nil {
		return nil, err
	}
	if err := t.run(ctx, "creating", out, ErrAlreadyExists); err != nil {
		return nil, err
	}
	return out, nil
}

// PutClaims writes the updates olds[i] → news[i] (as PutClaim does each) in one transaction: all of them
// or, when any stored version is no longer olds[i].Version, none (a *ClaimsError naming those claims).
func (s *Store) PutClaims(ctx context.Context, olds, news []Claim) ([]Claim, error) {
	if len(olds) != len(news) {
		return nil, fmt.Errorf("updating claims: %d old records for %d new ones: %w", len(olds), len(news), ErrInvalid)
	}
	if len(news) > MaxClaimsPerWrite {
		return nil, fmt.Errorf("updating %d claims at once: at most %d: %w", len(news), MaxClaimsPerWrite, ErrInvalid)
	}
	out := make([]Claim, len(news))
	t := s.newOwnClaimTxn()
	for i := range news {
		c, item, err := s.nextClaimItem(olds[i], news[i])
		if err != nil {
			return nil, err
		}
		out[i] = c
		t.update(i, olds[i], c, item)
	}
	if err := t.run(ctx, "updating", out, ErrConflict); err != nil {
		return nil, err
	}
	return out, nil
}
