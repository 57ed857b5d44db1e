package state

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// ErrNodeClassInUse is why a configuration that removes an EC2NodeClass is refused while claims that
// are not deleted still use it.
var ErrNodeClassInUse = errors.New("EC2NodeClass still used by NodeClaims")

// NodeClassesInUse counts, per EC2NodeClass, the claims that are not deleted (pending through
// terminating: their instance may still run with the class's launch template and instance profile).
func NodeClassesInUse(claims []Claim) map[string]int {
	used := map[string]int{}
	for _, c := range claims {
		if c.Lifecycle != Deleted && c.NodeClass != "" {
			used[c.NodeClass]++
		}
	}
	return used
}

// refuseRemovingUsedClasses returns an ErrNodeClassInUse naming each stored EC2NodeClass that items
// drop while claims use it, or the error that kept the claims from being listed; nil when no class in
// use is dropped.
func (s *Store) refuseRemovingUsedClasses(ctx context.Context, stored, items []ConfigItem) error {
	kept := map[string]bool{}
	for _, it := range items {
		if it.Kind == KindEC2NodeClass {
			kept[it.Name] = true
		}
	}
	var dropped []string
	for _, c := range stored {
		if c.Kind == KindEC2NodeClass && !kept[c.Name] {
			dropped = append(dropped, c.Name)
		}
	}
	if len(dropped) == 0 {
		return nil
	}
	claims, err := s.ListClaims(ctx)
	if err != nil {
		return fmt.Errorf("checking that no NodeClaim uses the EC2NodeClasses removed (%s), nothing applied: %w",
			strings.Join(dropped, ", "), err)
	}
	used := NodeClassesInUse(claims)
	sort.Strings(dropped)
	var refused []string
	for _, name := range dropped {
		if n := used[name]; n > 0 {
			claimWord := "NodeClaims use"
			if n == 1 {
				claimWord = "NodeClaim uses"
			}
			refused = append(refused, fmt.Sprintf("EC2NodeClass %s: %d %s it", name, n, claimWord))
		}
	}
	if len(refused) == 0 {
		return nil
	}
	return fmt.Errorf("%w, nothing applied (remove it once its nodes are gone): %s", ErrNodeClassInUse, strings.Join(refused, "; "))
}
