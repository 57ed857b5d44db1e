package state

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/nodewright/nodewright/shared/core/apis"
)

// UpdateRefusedError is a configuration write refused because a NodePool may not change that way
// (Karpenter's CRD update rules, apis.ValidateNodePoolUpdate); Problems name the object and field.
type UpdateRefusedError struct {
	Problems []string
}

func (e *UpdateRefusedError) Error() string {
	return "nothing applied: a NodePool cannot change this way:\n" + strings.Join(e.Problems, "\n")
}

// refuseInvalidUpdates checks every changed NodePool of items against the stored one of its name
// (current, by "Kind/name"); a stored spec that does not decode is no reason to refuse (it is replaced).
func refuseInvalidUpdates(current map[string]ConfigItem, items []ConfigItem) error {
	var problems []string
	for _, it := range items {
		old, ok := current[it.Kind+"/"+it.Name]
		if it.Kind != KindNodePool || !ok || old.SpecHash == it.SpecHash {
			continue
		}
		var before, after apis.NodePool
		if json.Unmarshal([]byte(old.Spec), &before) != nil {
			continue
		}
		if err := json.Unmarshal([]byte(it.Spec), &after); err != nil {
			return fmt.Errorf("decoding NodePool %s: %w", it.Name, err)
		}
		for _, e := range apis.ValidateNodePoolUpdate(&before, &after) {
			problems = append(problems, fmt.Sprintf("NodePool/%s: %s", it.Name, e.Error()))
		}
	}
	if len(problems) > 0 {
		return &UpdateRefusedError{Problems: problems}
	}
	return nil
}
