package drift

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRequirementSatisfiedBy(t *testing.T) {
	labels := map[string]string{"arch": "amd64", "cpu": "8"}
	cases := []struct {
		req  Requirement
		want bool
	}{
		{Requirement{"arch", OpIn, []string{"amd64", "arm64"}}, true},
		{Requirement{"arch", OpIn, []string{"arm64"}}, false},
		{Requirement{"missing", OpIn, []string{"x"}}, false},
		{Requirement{"arch", OpNotIn, []string{"arm64"}}, true},
		{Requirement{"arch", OpNotIn, []string{"amd64"}}, false},
		{Requirement{"missing", OpNotIn, []string{"x"}}, true},
		{Requirement{"arch", OpExists, nil}, true},
		{Requirement{"missing", OpExists, nil}, false},
		{Requirement{"arch", OpDoesNotExist, nil}, false},
		{Requirement{"missing", OpDoesNotExist, nil}, true},
		{Requirement{"cpu", OpGt, []string{"7"}}, true},
		{Requirement{"cpu", OpGt, []string{"8"}}, false},
		{Requirement{"cpu", OpLt, []string{"9"}}, true},
		{Requirement{"cpu", OpLt, []string{"8"}}, false},
		{Requirement{"cpu", OpGte, []string{"8"}}, true},
		{Requirement{"cpu", OpGte, []string{"9"}}, false},
		{Requirement{"cpu", OpLte, []string{"8"}}, true},
		{Requirement{"cpu", OpLte, []string{"7"}}, false},
		{Requirement{"arch", OpGt, []string{"1"}}, false},
		{Requirement{"missing", OpLt, []string{"1"}}, false},
		{Requirement{"arch", "Matches", []string{"amd64"}}, false},
	}
	for _, tc := range cases {
		t.Run(tc.req.String(), func(t *testing.T) {
			assert.Equal(t, tc.want, tc.req.SatisfiedBy(labels))
		})
	}
}
