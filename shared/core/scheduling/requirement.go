package scheduling

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Operator is a label selector operator. It extends corev1.NodeSelectorOperator with Gte and Lte.
type Operator string

// The operators a requirement may use.
const (
	OpIn           Operator = "In"
	OpNotIn        Operator = "NotIn"
	OpExists       Operator = "Exists"
	OpDoesNotExist Operator = "DoesNotExist"
	OpGt           Operator = "Gt"
	OpLt           Operator = "Lt"
	OpGte          Operator = "Gte"
	OpLte          Operator = "Lte"
)

// Requirement is the set of values one label key may take. It is either a finite set of allowed values,
// or the complement of a finite set of excluded values, optionally narrowed to an inclusive integer range.
// A finite set without values means the label must be absent (DoesNotExist). The zero value is not
// meaningful; build requirements with NewRequirement.
type Requirement struct {
	Key string
	// MinValues, when positive, asks that at least this many distinct values of Key remain available
	// among the instance types a claim may launch.
	MinValues int

	complement bool
	values     []string // sorted and unique
	hasGte     bool
	gte        int64
	hasLte     bool
	lte        int64
	// present, on a NotIn, says the label must also exist: an Exists intersected with a NotIn (a pod
	// requiring capacity-reservation-id Exists in a pool that excludes used-up reservations) is not the
	// plain NotIn, which a node without the label meets.
	present bool
}

// NewRequirement builds the requirement for key, operator and values. The key is normalised
// (NormalizeLabel). Numeric operators take exactly one integer value.
func NewRequirement(key string, op Operator, values ...string) (*Requirement, error) {
	r := &Requirement{Key: NormalizeLabel(key)}
	switch op {
	case OpIn:
		r.values = sortedUnique(values)
	case OpNotIn:
		r.complement = true
		r.values = sortedUnique(values)
	case OpExists:
		r.complement = true
	case OpDoesNotExist:
	case OpGt, OpLt, OpGte, OpLte:
		if len(values) != 1 {
			return nil, fmt.Errorf("operator %s on %q needs exactly one value, got %d", op, key, len(values))
		}
		n, err := strconv.ParseInt(values[0], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("operator %s on %q needs an integer, got %q", op, key, values[0])
		}
		r.complement = true
		switch op {
		case OpGt:
			if n == math.MaxInt64 {
				return &Requirement{Key: r.Key}, nil
			}
			r.hasGte, r.gte = true, n+1
		case OpGte:
			r.hasGte, r.gte = true, n
		case OpLt:
			if n == math.MinInt64 {
				return &Requirement{Key: r.Key}, nil
			}
			r.hasLte, r.lte = true, n-1
		case OpLte:
			r.hasLte, r.lte = true, n
		}
	default:
		return nil, fmt.Errorf("unsupported operator %q on %q", op, key)
	}
	return r, nil
}

// MustRequirement is NewRequirement for literals known to be valid; it panics on error.
func MustRequirement(key string, op Operator, values ...string) *Requirement {
	r, err := NewRequirement(key, op, values...)
	if err != nil {
		panic(err)
	}
	return r
}

// Operator returns In, NotIn, Exists or DoesNotExist: the shape of the set, with integer bounds read as
// a restricted Exists.
func (r *Requirement) Operator() Operator {
	if r.complement {
		if len(r.values) > 0 {
			return OpNotIn
		}
		return OpExists
	}
	if len(r.values) > 0 {
		return OpIn
	}
	return OpDoesNotExist
}

// Values returns the allowed values (for In) or the excluded values (for NotIn), sorted.
func (r *Requirement) Values() []string { return slices.Clone(r.values) }

// Has reports whether the label may take value v.
func (r *Requirement) Has(v string) bool {
	if r.hasGte || r.hasLte {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || (r.hasGte && n < r.gte) || (r.hasLte && n > r.lte) {
			return false
		}
	}
	_, found := slices.BinarySearch(r.values, v)
	return found != r.complement
}

// IsEmpty reports whether no label value satisfies the requirement: true for DoesNotExist and for
// contradictory intersections.
func (r *Requirement) IsEmpty() bool {
	if !r.complement {
		return len(r.values) == 0
	}
	if r.hasGte && r.hasLte {
		size := uint64(r.lte-r.gte) + 1
		if r.lte < r.gte {
			return true
		}
		excluded := uint64(0)
		for _, v := range r.values {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= r.gte && n <= r.lte {
				excluded++
			}
		}
		return excluded >= size
	}
	return false
}

// Intersection returns the values allowed by both r and o. MinValues is the larger of the two.
func (r *Requirement) Intersection(o *Requirement) *Requirement {
	out := &Requirement{Key: r.Key, MinValues: max(r.MinValues, o.MinValues)}
	out.complement = r.complement && o.complement
	out.hasGte, out.gte = mergeBound(r.hasGte, r.gte, o.hasGte, o.gte, true)
	out.hasLte, out.lte = mergeBound(r.hasLte, r.lte, o.hasLte, o.lte, false)
	switch {
	case r.complement && o.complement:
		out.values = unionSorted(r.values, o.values)
	case r.complement:
		out.values = differenceSorted(o.values, r.values)
	case o.complement:
		out.values = differenceSorted(r.values, o.values)
	default:
		out.values = intersectSorted(r.values, o.values)
	}
	if !out.complement {
		if out.hasGte || out.hasLte {
			out.values = slices.DeleteFunc(out.values, func(v string) bool {
				n, err := strconv.ParseInt(v, 10, 64)
				return err != nil || (out.hasGte && n < out.gte) || (out.hasLte && n > out.lte)
			})
		}
		out.hasGte, out.hasLte, out.gte, out.lte = false, false, 0, 0
		return out
	}
	if out.hasGte && out.hasLte && out.lte < out.gte {
		return &Requirement{Key: r.Key, MinValues: out.MinValues}
	}
	out.present = len(out.values) > 0 && !out.hasGte && !out.hasLte && (r.needsLabel() || o.needsLabel())
	return out
}

// needsLabel reports whether r, a complement, is met only by a node that has the label: Exists, a
// bounded range, or a NotIn that must exist.
func (r *Requirement) needsLabel() bool {
	return r.complement && (len(r.values) == 0 || r.hasGte || r.hasLte || r.present)
}

// Intersects reports whether some label value (or absence, when both allow it) satisfies r and o.
// Following Karpenter, two requirements that both allow the label to be absent (NotIn, DoesNotExist)
// always intersect.
func (r *Requirement) Intersects(o *Requirement) bool {
	if !r.Intersection(o).IsEmpty() {
		return true
	}
	return allowsAbsence(r) && allowsAbsence(o)
}

func allowsAbsence(r *Requirement) bool {
	op := r.Operator()
	return (op == OpNotIn || op == OpDoesNotExist) && !r.hasGte && !r.hasLte && !r.present
}

// Count returns the number of allowed values for a finite set, and math.MaxInt for a complement.
func (r *Requirement) Count() int {
	if r.complement {
		return math.MaxInt
	}
	return len(r.values)
}

// Any returns a deterministic value that satisfies r: the first allowed value, the lower bound, or "".
func (r *Requirement) Any() string {
	if !r.complement {
		if len(r.values) > 0 {
			return r.values[0]
		}
		return ""
	}
	if r.hasGte || r.hasLte {
		n := int64(0)
		if r.hasGte {
			n = r.gte
		} else if r.lte < 0 {
			n = r.lte
		}
		for !r.Has(strconv.FormatInt(n, 10)) && (!r.hasLte || n < r.lte) {
			n++
		}
		return strconv.FormatInt(n, 10)
	}
	return ""
}

// Specs returns the requirement as serialisable specs. A key with both bounds yields two specs.
func (r *Requirement) Specs() []NodeSelectorRequirement {
	var mv *int
	if r.MinValues > 0 {
		v := r.MinValues
		mv = &v
	}
	var out []NodeSelectorRequirement
	if r.present {
		out = append(out, NodeSelectorRequirement{Key: r.Key, Operator: OpExists, MinValues: mv})
	}
	if r.hasGte {
		out = append(out, NodeSelectorRequirement{Key: r.Key, Operator: OpGte, Values: []string{strconv.FormatInt(r.gte, 10)}, MinValues: mv})
	}
	if r.hasLte {
		out = append(out, NodeSelectorRequirement{Key: r.Key, Operator: OpLte, Values: []string{strconv.FormatInt(r.lte, 10)}, MinValues: mv})
	}
	if len(out) > 0 && len(r.values) == 0 {
		return out
	}
	return append(out, NodeSelectorRequirement{Key: r.Key, Operator: r.Operator(), Values: r.Values(), MinValues: mv})
}

// String renders the requirement as "key Op [values]" plus any bounds, for reasons and logs.
func (r *Requirement) String() string {
	var b strings.Builder
	b.WriteString(r.Key)
	b.WriteByte(' ')
	b.WriteString(string(r.Operator()))
	if len(r.values) > 0 {
		fmt.Fprintf(&b, " [%s]", strings.Join(r.values, " "))
	}
	if r.hasGte {
		fmt.Fprintf(&b, " >=%d", r.gte)
	}
	if r.hasLte {
		fmt.Fprintf(&b, " <=%d", r.lte)
	}
	if r.present {
		b.WriteString(" and Exists")
	}
	if r.MinValues > 0 {
		fmt.Fprintf(&b, " minValues=%d", r.MinValues)
	}
	return b.String()
}

func mergeBound(ha bool, a int64, hb bool, b int64, lower bool) (bool, int64) {
	switch {
	case ha && hb:
		if lower {
			return true, max(a, b)
		}
		return true, min(a, b)
	case ha:
		return true, a
	case hb:
		return true, b
	}
	return false, 0
}
