package scheduling

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// NodeSelectorRequirement is a serialisable requirement: Karpenter's NodeSelectorRequirementWithMinValues
// with the Gte and Lte operators.
type NodeSelectorRequirement struct {
	Key       string   `json:"key"`
	Operator  Operator `json:"operator"`
	Values    []string `json:"values,omitempty"`
	MinValues *int     `json:"minValues,omitempty"`
}

// Requirements is a conjunction of requirements, at most one per key. Adding a requirement for a key
// already present intersects the two.
type Requirements map[string]*Requirement

// NewRequirements returns the conjunction of reqs.
func NewRequirements(reqs ...*Requirement) Requirements {
	r := make(Requirements, len(reqs))
	r.Add(reqs...)
	return r
}

// RequirementsFromSpecs parses serialisable requirements.
func RequirementsFromSpecs(specs []NodeSelectorRequirement) (Requirements, error) {
	r := make(Requirements, len(specs))
	for _, s := range specs {
		req, err := NewRequirement(s.Key, s.Operator, s.Values...)
		if err != nil {
			return nil, err
		}
		if s.MinValues != nil {
			req.MinValues = *s.MinValues
		}
		r.Add(req)
	}
	return r, nil
}

// RequirementsFromNodeSelector turns a Kubernetes node selector term's matchExpressions into requirements.
// matchFields are rejected: Karpenter cannot provision for them.
func RequirementsFromNodeSelector(term corev1.NodeSelectorTerm) (Requirements, error) {
	if len(term.MatchFields) > 0 {
		return nil, fmt.Errorf("node selector term uses matchFields, which cannot be provisioned for")
	}
	r := make(Requirements, len(term.MatchExpressions))
	for _, e := range term.MatchExpressions {
		req, err := NewRequirement(e.Key, Operator(e.Operator), e.Values...)
		if err != nil {
			return nil, err
		}
		r.Add(req)
	}
	return r, nil
}

// RequirementsFromLabels returns In requirements, one per label.
func RequirementsFromLabels(labels map[string]string) Requirements {
	r := make(Requirements, len(labels))
	for k, v := range labels {
		r.Add(&Requirement{Key: NormalizeLabel(k), values: []string{v}})
	}
	return r
}

// Add intersects each requirement into r.
func (r Requirements) Add(reqs ...*Requirement) {
	for _, req := range reqs {
		if existing, ok := r[req.Key]; ok {
			r[req.Key] = existing.Intersection(req)
			continue
		}
		r[req.Key] = req
	}
}

// AddAll intersects every requirement of o into r.
func (r Requirements) AddAll(o Requirements) {
	for _, req := range o {
		r.Add(req)
	}
}

// Copy returns a shallow copy; requirements are immutable once built, so sharing them is safe.
func (r Requirements) Copy() Requirements {
	out := make(Requirements, len(r))
	for k, v := range r {
		out[k] = v
	}
	return out
}

// Has reports whether r constrains key.
func (r Requirements) Has(key string) bool {
	_, ok := r[key]
	return ok
}

// Get returns the requirement for key, or Exists when r does not constrain it.
func (r Requirements) Get(key string) *Requirement {
	if req, ok := r[key]; ok {
		return req
	}
	return &Requirement{Key: key, complement: true}
}

// Keys returns the constrained keys, sorted.
func (r Requirements) Keys() []string { return sortedKeys(r) }

// IncompatibleError says why two sets of requirements cannot both hold.
type IncompatibleError struct {
	Key      string
	Existing string // what the node side allows, "" when the key is undefined
	Incoming string // what the pod side asks
}

func (e *IncompatibleError) Error() string {
	if e.Existing == "" {
		return fmt.Sprintf("label %q is not defined (pod requires %s)", e.Key, e.Incoming)
	}
	return fmt.Sprintf("pod requires %s but only %s is available", e.Incoming, e.Existing)
}

// Intersects returns nil when every key constrained by both r and incoming has a common value, or an
// *IncompatibleError for the first (sorted) key that does not. Keys constrained by only one side are
// ignored.
func (r Requirements) Intersects(incoming Requirements) error {
	small, large := r, incoming
	if len(incoming) < len(r) {
		small, large = incoming, r
	}
	var bad []string
	for key, a := range small {
		b, ok := large[key]
		if !ok {
			continue
		}
		if !a.Intersects(b) {
			bad = append(bad, key)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	key := bad[0]
	for _, k := range bad[1:] {
		key = min(key, k)
	}
	return &IncompatibleError{Key: key, Existing: r[key].String(), Incoming: incoming[key].String()}
}

// intersectsAll is Intersects() == nil without building the error: the placement loops ask it of
// every node for every pod, and wording the refusal (the requirements as text) cost more than the
// test.
func (r Requirements) intersectsAll(incoming Requirements) bool {
	small, large := r, incoming
	if len(incoming) < len(r) {
		small, large = incoming, r
	}
	for key, a := range small {
		if b, ok := large[key]; ok && !a.Intersects(b) {
			return false
		}
	}
	return true
}

// Compatible checks that a pod's requirements (incoming) can be met by a node or NodePool described by
// r. Beyond Intersects, every custom (not well-known) key the pod requires with In, Exists, Gt or Lt
// must be defined by r, because a node launched for r would not carry that label. Well-known keys may be
// undefined: instance types and offerings supply them.
func (r Requirements) Compatible(incoming Requirements) error {
	for key, req := range incoming {
		if _, ok := r[key]; ok || IsWellKnownLabel(key) {
			continue
		}
		if op := req.Operator(); (op == OpNotIn || op == OpDoesNotExist) && !req.hasGte && !req.hasLte {
			continue
		}
		return &IncompatibleError{Key: key, Incoming: req.String()}
	}
	return r.Intersects(incoming)
}

// Intersection returns a new set holding the intersection of r and o key by key.
func (r Requirements) Intersection(o Requirements) Requirements {
	out := r.Copy()
	out.AddAll(o)
	return out
}

// Labels returns the labels a node launched for r would carry: every key with exactly one allowed value.
func (r Requirements) Labels() map[string]string {
	out := map[string]string{}
	for k, req := range r {
		if !req.complement && len(req.values) == 1 {
			out[k] = req.values[0]
		}
	}
	return out
}

// Specs returns the requirements as serialisable specs sorted by key.
func (r Requirements) Specs() []NodeSelectorRequirement {
	var out []NodeSelectorRequirement
	for _, k := range r.Keys() {
		out = append(out, r[k].Specs()...)
	}
	return out
}

// String renders the requirements sorted by key.
func (r Requirements) String() string {
	parts := make([]string, 0, len(r))
	for _, k := range r.Keys() {
		parts = append(parts, r[k].String())
	}
	return strings.Join(parts, ", ")
}
