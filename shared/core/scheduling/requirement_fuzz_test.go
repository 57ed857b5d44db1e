package scheduling

import (
	"testing"
)

// FuzzRequirementIntersection checks that building requirements never panics and that intersection
// means "allowed by both" for any value.
func FuzzRequirementIntersection(f *testing.F) {
	f.Add("In", "a,b", "NotIn", "b", "b")
	f.Add("Gt", "3", "Lt", "10", "5")
	f.Add("Gte", "-4", "In", "-4,7,x", "-4")
	f.Add("Exists", "", "DoesNotExist", "", "")
	f.Fuzz(func(t *testing.T, opA, valsA, opB, valsB, probe string) {
		split := func(s string) []string {
			var out []string
			start := 0
			for i := 0; i <= len(s); i++ {
				if i == len(s) || s[i] == ',' {
					if i > start {
						out = append(out, s[start:i])
					}
					start = i + 1
				}
			}
			return out
		}
		a, err := NewRequirement("k", Operator(opA), split(valsA)...)
		if err != nil {
			return
		}
		b, err := NewRequirement("k", Operator(opB), split(valsB)...)
		if err != nil {
			return
		}
		got := a.Intersection(b)
		if want := a.Has(probe) && b.Has(probe); got.Has(probe) != want {
			t.Fatalf("%s ∩ %s: Has(%q) = %v, want %v", a, b, probe, got.Has(probe), want)
		}
		if got.Has(probe) && got.IsEmpty() {
			t.Fatalf("%s is empty but allows %q", got, probe)
		}
		_ = got.Specs()
		_ = got.String()
	})
}
