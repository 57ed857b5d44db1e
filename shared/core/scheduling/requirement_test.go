package scheduling

import (
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewRequirement(t *testing.T) {
	tests := []struct {
		name     string
		op       Operator
		values   []string
		wantOp   Operator
		has      []string
		hasNot   []string
		empty    bool
		wantErr  string
		wantKey  string
		inputKey string
	}{
		{name: "In", op: OpIn, values: []string{"b", "a", "a"}, wantOp: OpIn, has: []string{"a", "b"}, hasNot: []string{"c", ""}},
		{name: "NotIn", op: OpNotIn, values: []string{"a"}, wantOp: OpNotIn, has: []string{"b"}, hasNot: []string{"a"}},
		{name: "Exists", op: OpExists, wantOp: OpExists, has: []string{"anything"}},
		{name: "DoesNotExist", op: OpDoesNotExist, wantOp: OpDoesNotExist, hasNot: []string{"a"}, empty: true},
		{name: "Gt", op: OpGt, values: []string{"4"}, wantOp: OpExists, has: []string{"5", "100"}, hasNot: []string{"4", "3", "x"}},
		{name: "Gte", op: OpGte, values: []string{"4"}, wantOp: OpExists, has: []string{"4", "5"}, hasNot: []string{"3"}},
		{name: "Lt", op: OpLt, values: []string{"4"}, wantOp: OpExists, has: []string{"3", "-1"}, hasNot: []string{"4"}},
		{name: "Lte", op: OpLte, values: []string{"4"}, wantOp: OpExists, has: []string{"4"}, hasNot: []string{"5"}},
		{name: "Gt of MaxInt64 is DoesNotExist", op: OpGt, values: []string{strconv.FormatInt(math.MaxInt64, 10)}, wantOp: OpDoesNotExist, empty: true},
		{name: "Lt of MinInt64 is DoesNotExist", op: OpLt, values: []string{strconv.FormatInt(math.MinInt64, 10)}, wantOp: OpDoesNotExist, empty: true},
		{name: "Gt needs one value", op: OpGt, values: []string{"1", "2"}, wantErr: "exactly one value"},
		{name: "Gt needs an integer", op: OpGt, values: []string{"x"}, wantErr: "needs an integer"},
		{name: "unknown operator", op: "Near", wantErr: "unsupported operator"},
		{name: "deprecated key is normalised", op: OpIn, values: []string{"us-west-2a"}, inputKey: "failure-domain.beta.kubernetes.io/zone", wantKey: LabelZone, wantOp: OpIn, has: []string{"us-west-2a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := "example.com/key"
			if tt.inputKey != "" {
				key = tt.inputKey
			}
			r, err := NewRequirement(key, tt.op, tt.values...)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			if tt.wantKey != "" {
				assert.Equal(t, tt.wantKey, r.Key)
			}
			assert.Equal(t, tt.wantOp, r.Operator())
			for _, v := range tt.has {
				assert.True(t, r.Has(v), "should allow %q", v)
			}
			for _, v := range tt.hasNot {
				assert.False(t, r.Has(v), "should reject %q", v)
			}
			assert.Equal(t, tt.empty, r.IsEmpty())
		})
	}
}

func TestRequirementIntersection(t *testing.T) {
	k := "example.com/key"
	tests := []struct {
		name       string
		a, b       *Requirement
		wantOp     Operator
		wantValues []string
		has        []string
		hasNot     []string
		empty      bool
		intersects bool
	}{
		{name: "In ∩ In", a: MustRequirement(k, OpIn, "a", "b"), b: MustRequirement(k, OpIn, "b", "c"), wantOp: OpIn, wantValues: []string{"b"}, intersects: true},
		{name: "disjoint In", a: MustRequirement(k, OpIn, "a"), b: MustRequirement(k, OpIn, "b"), wantOp: OpDoesNotExist, empty: true},
		{name: "In ∩ NotIn", a: MustRequirement(k, OpIn, "a", "b"), b: MustRequirement(k, OpNotIn, "a"), wantOp: OpIn, wantValues: []string{"b"}, intersects: true},
		{name: "NotIn ∩ NotIn unions exclusions", a: MustRequirement(k, OpNotIn, "a"), b: MustRequirement(k, OpNotIn, "b"), wantOp: OpNotIn, wantValues: []string{"a", "b"}, intersects: true},
		{name: "Exists ∩ In", a: MustRequirement(k, OpExists), b: MustRequirement(k, OpIn, "x"), wantOp: OpIn, wantValues: []string{"x"}, intersects: true},
		{name: "Exists ∩ DoesNotExist", a: MustRequirement(k, OpExists), b: MustRequirement(k, OpDoesNotExist), wantOp: OpDoesNotExist, empty: true},
		{name: "DoesNotExist ∩ NotIn still intersects (label may be absent)", a: MustRequirement(k, OpDoesNotExist), b: MustRequirement(k, OpNotIn, "a"), wantOp: OpDoesNotExist, empty: true, intersects: true},
		{name: "Gt ∩ Lt range", a: MustRequirement(k, OpGt, "2"), b: MustRequirement(k, OpLt, "5"), wantOp: OpExists, has: []string{"3", "4"}, hasNot: []string{"2", "5"}, intersects: true},
		{name: "contradictory bounds", a: MustRequirement(k, OpGt, "5"), b: MustRequirement(k, OpLt, "3"), wantOp: OpDoesNotExist, empty: true},
		{name: "Gte ∩ Lte single value", a: MustRequirement(k, OpGte, "4"), b: MustRequirement(k, OpLte, "4"), wantOp: OpExists, has: []string{"4"}, hasNot: []string{"3", "5"}, intersects: true},
		{name: "bounds filter In values", a: MustRequirement(k, OpIn, "1", "8", "16", "x"), b: MustRequirement(k, OpGt, "4"), wantOp: OpIn, wantValues: []string{"16", "8"}, intersects: true},
		{name: "Gte ∩ Lte keeps a range", a: MustRequirement(k, OpGte, "1"), b: MustRequirement(k, OpLte, "2"), wantOp: OpExists, intersects: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.a.Intersection(tt.b)
			assert.Equal(t, tt.wantOp, got.Operator())
			if tt.wantValues != nil {
				assert.Equal(t, tt.wantValues, got.Values())
			}
			for _, v := range tt.has {
				assert.True(t, got.Has(v), "should allow %q", v)
			}
			for _, v := range tt.hasNot {
				assert.False(t, got.Has(v), "should reject %q", v)
			}
			assert.Equal(t, tt.empty, got.IsEmpty())
			assert.Equal(t, tt.intersects, tt.a.Intersects(tt.b))
			// Intersection is commutative.
			assert.Equal(t, got.String(), tt.b.Intersection(tt.a).String())
		})
	}
}

func TestRequirementRangeExcludedByNotIn(t *testing.T) {
	r := MustRequirement("k", OpGte, "1").Intersection(MustRequirement("k", OpLte, "2")).Intersection(MustRequirement("k", OpNotIn, "1", "2"))
	assert.True(t, r.IsEmpty())
}

func TestRequirementMinValuesTakesMax(t *testing.T) {
	a := MustRequirement("k", OpExists)
	a.MinValues = 2
	b := MustRequirement("k", OpIn, "a", "b", "c")
	b.MinValues = 3
	assert.Equal(t, 3, a.Intersection(b).MinValues)
	assert.Equal(t, 3, b.Intersection(a).MinValues)
}

func TestRequirementSpecs(t *testing.T) {
	r := MustRequirement("k", OpGt, "2").Intersection(MustRequirement("k", OpLt, "10"))
	specs := r.Specs()
	require.Len(t, specs, 2, "a key with both bounds serialises as two requirements")
	assert.Equal(t, NodeSelectorRequirement{Key: "k", Operator: OpGte, Values: []string{"3"}}, specs[0])
	assert.Equal(t, NodeSelectorRequirement{Key: "k", Operator: OpLte, Values: []string{"9"}}, specs[1])

	in := MustRequirement("k", OpIn, "b", "a")
	in.MinValues = 2
	two := 2
	assert.Equal(t, []NodeSelectorRequirement{{Key: "k", Operator: OpIn, Values: []string{"a", "b"}, MinValues: &two}}, in.Specs())
	assert.Equal(t, "k In [a b] minValues=2", in.String())
}

func TestRequirementAny(t *testing.T) {
	assert.Equal(t, "a", MustRequirement("k", OpIn, "b", "a").Any())
	assert.Equal(t, "5", MustRequirement("k", OpGt, "4").Any())
	assert.Equal(t, "0", MustRequirement("k", OpLt, "4").Any())
	assert.Equal(t, "", MustRequirement("k", OpDoesNotExist).Any())
}

// TestExistsIntersectedWithNotIn checks that Exists ∩ NotIn [x] still needs the label: a node without
// it does not meet it, unlike a plain NotIn, and it survives a round trip through specs.
func TestExistsIntersectedWithNotIn(t *testing.T) {
	key := LabelCapacityReservationID
	both := MustRequirement(key, OpExists).Intersection(MustRequirement(key, OpNotIn, "cr-1"))
	assert.False(t, allowsAbsence(both), "the label must exist")
	assert.True(t, allowsAbsence(MustRequirement(key, OpNotIn, "cr-1")), "a plain NotIn allows absence")
	assert.False(t, both.Has("cr-1"))
	assert.True(t, both.Has("cr-2"))
	assert.False(t, both.Intersects(MustRequirement(key, OpDoesNotExist)))
	assert.Equal(t, both.String(), MustRequirement(key, OpNotIn, "cr-1").Intersection(MustRequirement(key, OpExists)).String(), "order does not matter")
	assert.NotEqual(t, both.String(), MustRequirement(key, OpNotIn, "cr-1").String())

	back, err := RequirementsFromSpecs(both.Specs())
	require.NoError(t, err)
	assert.False(t, allowsAbsence(back[key]))
	assert.Equal(t, both.String(), back[key].String())

	again := both.Intersection(MustRequirement(key, OpNotIn, "cr-2"))
	assert.False(t, allowsAbsence(again), "a further NotIn keeps it")
}
