package drift

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Requirement operators.
const (
	OpIn           = "In"
	OpNotIn        = "NotIn"
	OpExists       = "Exists"
	OpDoesNotExist = "DoesNotExist"
	OpGt           = "Gt"
	OpLt           = "Lt"
	OpGte          = "Gte"
	OpLte          = "Lte"
)

// SatisfiedBy reports whether a node with labels meets the requirement. A label the node lacks meets
// only NotIn and DoesNotExist; Gt, Lt, Gte and Lte compare integers, and a value that is not one fails.
// An unknown operator is never met.
func (r Requirement) SatisfiedBy(labels map[string]string) bool {
	v, has := labels[r.Key]
	switch r.Operator {
	case OpIn:
		return has && slices.Contains(r.Values, v)
	case OpNotIn:
		return !has || !slices.Contains(r.Values, v)
	case OpExists:
		return has
	case OpDoesNotExist:
		return !has
	case OpGt, OpLt, OpGte, OpLte:
		if !has || len(r.Values) != 1 {
			return false
		}
		got, err1 := strconv.ParseInt(v, 10, 64)
		bound, err2 := strconv.ParseInt(r.Values[0], 10, 64)
		if err1 != nil || err2 != nil {
			return false
		}
		switch r.Operator {
		case OpGt:
			return got > bound
		case OpLt:
			return got < bound
		case OpGte:
			return got >= bound
		default:
			return got <= bound
		}
	}
	return false
}

func (r Requirement) String() string {
	if len(r.Values) == 0 {
		return r.Key + " " + r.Operator
	}
	return fmt.Sprintf("%s %s [%s]", r.Key, r.Operator, strings.Join(r.Values, ","))
}

// firstUnmet returns the first requirement labels do not meet.
func firstUnmet(reqs []Requirement, labels map[string]string) (Requirement, bool) {
	for _, r := range reqs {
		if !r.SatisfiedBy(labels) {
			return r, true
		}
	}
	return Requirement{}, false
}
