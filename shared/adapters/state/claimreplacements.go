package state

import (
	"context"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// replacedByPrefix starts the partition key of the markers that name the claims launched to replace one:
// pk REPLACEDBY#<replaced claim>, sk <replacement claim>, ttl. A drain finds its replacements by key with
// them (ClaimReplacements) instead of reading every claim.
const replacedByPrefix = "REPLACEDBY#"

// markReplacements writes a marker for every claim each of cs replaces (Claim.Replaces), before the
// claims themselves are written: a claim that exists has its markers. They are not part of the claims'
// transaction, which has no room for them (see MaxClaimsPerWrite); a marker whose claim was never
// written (a failed create, a name drawn again) is harmless, as ClaimReplacements checks the claim. They
// expire DeletedClaimRetention after they are written, long after any drain stopped waiting.
func (s *Store) markReplacements(ctx context.Context, cs []Claim) error {
	ttl := num(s.now().Add(DeletedClaimRetention).Unix())
	var writes []types.WriteRequest
	for _, c := range cs {
		for _, replaced := range c.Replaces {
			item := key(replacedByPrefix+replaced, c.Name)
			item[TTLAttribute] = ttl
			writes = append(writes, types.WriteRequest{PutRequest: &types.PutRequest{Item: item}})
		}
	}
	for len(writes) > 0 {
		n := min(len(writes), batchWriteLimit)
		if err := s.writeBatch(ctx, writes[:n]); err != nil {
			return fmt.Errorf("marking the claims replaced by %d claims: %w", len(cs), err)
		}
		writes = writes[n:]
	}
	return nil
}

// ClaimReplacements returns the claims launched to replace the claim replaced (those that name it in
// Claim.Replaces), whatever their lifecycle, each read strongly consistent by key: a query of the claim's
// replacement markers, then one read per replacement. It reads no other claim.
func (s *Store) ClaimReplacements(ctx context.Context, replaced string) ([]Claim, error) {
	markers, err := queryAll[struct {
		SK  string `dynamodbav:"sk"`
		TTL int64  `dynamodbav:"ttl"`
	}](ctx, s.db, s.partition(replacedByPrefix+replaced, ""))
	if err != nil {
		return nil, fmt.Errorf("finding the replacements of claim %s: %w", replaced, err)
	}
	var out []Claim
	for _, m := range markers {
		if m.TTL > 0 && m.TTL <= s.now().Unix() {
			continue
		}
		c, err := s.GetClaim(ctx, m.SK)
		if IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("finding the replacements of claim %s: %w", replaced, err)
		}
		if slices.Contains(c.Replaces, replaced) {
			out = append(out, c)
		}
	}
	return out, nil
}
