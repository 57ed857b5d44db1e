package main

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

// claimsOfNode returns the claims whose Node is node: those not deleted first, then the deleted ones
// (kept for DeletedClaimRetention), newest first within each.
func claimsOfNode(ctx context.Context, store *state.Store, node string) ([]state.Claim, error) {
	all, err := store.ListAllClaims(ctx)
	if err != nil {
		return nil, err
	}
	var found []state.Claim
	for _, c := range all {
		if c.NodeName == node {
			found = append(found, c)
		}
	}
	sort.SliceStable(found, func(i, j int) bool {
		a, b := found[i], found[j]
		if da, db := a.Lifecycle == state.Deleted, b.Lifecycle == state.Deleted; da != db {
			return db
		}
		return a.CreatedAt.After(b.CreatedAt)
	})
	return found, nil
}

// liveClaimOfNode is the one claim not yet deleted whose Node is node. A node no such claim has is not
// Nodewright's to touch: the error says so, naming the node.
func liveClaimOfNode(ctx context.Context, store *state.Store, node string) (state.Claim, error) {
	claims, err := claimsOfNode(ctx, store, node)
	if err != nil {
		return state.Claim{}, err
	}
	var live []string
	for _, c := range claims {
		if c.Lifecycle != state.Deleted {
			live = append(live, c.Name)
		}
	}
	switch len(live) {
	case 0:
		return state.Claim{}, fmt.Errorf("node %s: no live NodeClaim in this Nodewright's state table has it as its Node; "+
			"Nodewright disrupts only the nodes it launched", node)
	case 1:
		return claims[0], nil
	}
	return state.Claim{}, fmt.Errorf("node %s is recorded on more than one live NodeClaim (%s); name the NodeClaim instead",
		node, strings.Join(live, ", "))
}
