package provisioningqueue

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestGroupsAreDistinctAndFitSQS(t *testing.T) {
	long := strings.Repeat("c", 100)
	cases := []struct {
		name string
		a, b string
	}{
		{"two pods", PodGroup("demo", "uid-1"), PodGroup("demo", "uid-2")},
		{"two claims", UrgentGroup("demo", "default-a"), UrgentGroup("demo", "default-b")},
		{"a pod and a claim of the same name", PodGroup("demo", "x"), UrgentGroup("demo", "x")},
		{"two clusters", UrgentGroup("demo", "x"), UrgentGroup("prod", "x")},
		{"long names", UrgentGroup(long, "default-a"), UrgentGroup(long, "default-b")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.NotEqual(t, tc.a, tc.b)
			for _, g := range []string{tc.a, tc.b} {
				assert.LessOrEqual(t, len(g), maxGroupIDLen, g)
			}
		})
	}
	assert.Equal(t, "demo/urgent/default-a", UrgentGroup("demo", "default-a"))
	assert.Equal(t, UrgentGroup(long, "x"), UrgentGroup(long, "x"), "stable")
}
