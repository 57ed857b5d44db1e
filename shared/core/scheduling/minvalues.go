package scheduling

import (
	"fmt"
)

// MinValuesError says which requirement's minValues the instance types fail to meet.
type MinValuesError struct {
	Key        string
	Want, Have int
}

func (e *MinValuesError) Error() string {
	return fmt.Sprintf("minValues for %s needs %d distinct values, the fitting instance types offer %d", e.Key, e.Want, e.Have)
}

// distinctValues counts the values of key, allowed by reqs, that the candidates' instance types carry.
func distinctValues(key string, cands []*candidate, reqs Requirements) int {
	seen := map[string]bool{}
	allowed := reqs.Get(key)
	for _, c := range cands {
		r, ok := c.it.Requirements[key]
		if !ok || r.complement {
			continue
		}
		for _, v := range r.values {
			if allowed.Has(v) {
				seen[v] = true
			}
		}
	}
	return len(seen)
}

// checkMinValues returns nil when cands satisfy every minValues in reqs, or the first (sorted by key)
// requirement that they do not.
func checkMinValues(cands []*candidate, reqs Requirements) *MinValuesError {
	for _, key := range reqs.Keys() {
		want := reqs[key].MinValues
		if want <= 0 {
			continue
		}
		if have := distinctValues(key, cands, reqs); have < want {
			return &MinValuesError{Key: key, Want: want, Have: have}
		}
	}
	return nil
}

// truncateForMinValues returns at most n candidates, cheapest first, while keeping every minValues in
// reqs satisfied when the full list satisfies it: candidates that add a missing value are kept ahead of
// cheaper ones that do not.
func truncateForMinValues(cands []*candidate, reqs Requirements, n int) []*candidate {
	if len(cands) <= n {
		return cands
	}
	head := cands[:n]
	if checkMinValues(head, reqs) == nil {
		return head
	}
	// Pick, cheapest first, the candidates that contribute a new value to some minValues key, then fill
	// the remaining slots with the cheapest of the rest.
	picked := make([]bool, len(cands))
	count := 0
	for _, key := range reqs.Keys() {
		want := reqs[key].MinValues
		if want <= 0 {
			continue
		}
		seen := map[string]bool{}
		for i, c := range cands {
			if len(seen) >= want || count >= n {
				break
			}
			r, ok := c.it.Requirements[key]
			if !ok || r.complement {
				continue
			}
			fresh := false
			for _, v := range r.values {
				if reqs.Get(key).Has(v) && !seen[v] {
					seen[v], fresh = true, true
				}
			}
			if fresh && !picked[i] {
				picked[i] = true
				count++
			}
		}
	}
	for i := range cands {
		if count >= n {
			break
		}
		if !picked[i] {
			picked[i] = true
			count++
		}
	}
	out := make([]*candidate, 0, n)
	for i, c := range cands {
		if picked[i] {
			out = append(out, c)
		}
	}
	return out
}
