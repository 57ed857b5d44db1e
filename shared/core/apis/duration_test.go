package apis_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/nodewright/nodewright/shared/core/apis"
)

func TestNillableDuration(t *testing.T) {
	cases := []struct {
		in    apis.NillableDuration
		want  *time.Duration
		never bool
	}{
		{"720h", ptr(720 * time.Hour), false},
		{"1h30m", ptr(90 * time.Minute), false},
		{"0s", ptr(time.Duration(0)), false},
		{"Never", nil, true},
		{"", nil, false},
		{"30d", nil, false},
	}
	for _, c := range cases {
		t.Run(string(c.in), func(t *testing.T) {
			assert.Equal(t, c.want, c.in.Duration())
			assert.Equal(t, c.never, c.in.IsNever())
		})
	}
}

func TestDurationParse(t *testing.T) {
	d, err := apis.Duration("48h").Parse()
	require.NoError(t, err)
	assert.Equal(t, 48*time.Hour, d)
	_, err = apis.Duration("two days").Parse()
	assert.Error(t, err)
}

func TestParseBudgetSchedule(t *testing.T) {
	s, err := apis.ParseBudgetSchedule("0 9 * * mon-fri")
	require.NoError(t, err)
	// Schedules are evaluated in UTC whatever the caller's zone.
	from := time.Date(2026, 11, 20, 10, 0, 0, 0, time.FixedZone("X", 5*3600)) // Friday 05:00 UTC
	assert.Equal(t, time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC), s.Next(from).UTC())
	_, err = apis.ParseBudgetSchedule("61 * * * *")
	assert.Error(t, err)
}

// TestValidationParsesDurations: a duration the field's pattern allows but a time.Duration cannot hold is
// refused, naming the field and why; the longest one that fits, and Never where Karpenter allows it, pass.
func TestValidationParsesDurations(t *testing.T) {
	const (
		overflow = "2562048h"    // one hour past the longest time.Duration
		sumsOver = "2562047h48m" // each part fits, the sum does not
		longest  = "2562047h"
	)
	nodePool := func(set func(np *apis.NodePool)) field.ErrorList {
		np := baseNodePool(t)
		set(np)
		return apis.ValidateNodePool(np)
	}
	budget := func(d string) func(np *apis.NodePool) {
		return func(np *apis.NodePool) {
			np.Spec.Disruption.Budgets = []apis.Budget{{Nodes: "1", Schedule: ptr("0 9 * * *"), Duration: ptr(apis.Duration(d))}}
		}
	}
	tgp := func(d string) func(np *apis.NodePool) {
		return func(np *apis.NodePool) { np.Spec.Template.Spec.TerminationGracePeriod = ptr(apis.Duration(d)) }
	}
	expire := func(d string) func(np *apis.NodePool) {
		return func(np *apis.NodePool) { np.Spec.Template.Spec.ExpireAfter = apis.NillableDuration(d) }
	}
	consolidate := func(d string) func(np *apis.NodePool) {
		return func(np *apis.NodePool) { np.Spec.Disruption.ConsolidateAfter = apis.NillableDuration(d) }
	}
	claim := func(set func(c *apis.NodeClaim)) field.ErrorList {
		c := apis.NewNodeClaim(baseNodePool(t))
		set(c)
		return apis.ValidateNodeClaim(c)
	}
	cases := []struct {
		name, path, value string
		errs              field.ErrorList
		tooLong           bool // refused as too long; otherwise accepted
	}{
		{"terminationGracePeriod overflows", "spec.template.spec.terminationGracePeriod", overflow, nodePool(tgp(overflow)), true},
		{"terminationGracePeriod sum overflows", "spec.template.spec.terminationGracePeriod", sumsOver, nodePool(tgp(sumsOver)), true},
		{"terminationGracePeriod longest", "", "", nodePool(tgp(longest)), false},
		{"expireAfter overflows", "spec.template.spec.expireAfter", overflow, nodePool(expire(overflow)), true},
		{"expireAfter longest", "", "", nodePool(expire(longest)), false},
		{"expireAfter Never", "", "", nodePool(expire(apis.Never)), false},
		{"consolidateAfter overflows", "spec.disruption.consolidateAfter", overflow, nodePool(consolidate(overflow)), true},
		{"consolidateAfter Never", "", "", nodePool(consolidate(apis.Never)), false},
		{"budget duration overflows", "spec.disruption.budgets[0].duration", overflow, nodePool(budget(overflow)), true},
		{"budget duration longest", "", "", nodePool(budget(longest)), false},
		{"claim terminationGracePeriod overflows", "spec.terminationGracePeriod", overflow,
			claim(func(c *apis.NodeClaim) { c.Spec.TerminationGracePeriod = ptr(apis.Duration(overflow)) }), true},
		{"claim expireAfter overflows", "spec.expireAfter", overflow,
			claim(func(c *apis.NodeClaim) { c.Spec.ExpireAfter = apis.NillableDuration(overflow) }), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !c.tooLong {
				assert.Empty(t, c.errs)
				return
			}
			require.Len(t, c.errs, 1)
			assert.Equal(t, c.path+`: Invalid value: "`+c.value+`": is longer than the longest duration nodewright can time (2562047h47m16s, about 292 years)`,
				c.errs[0].Error())
		})
	}
	// Never stays refused where Karpenter's pattern refuses it.
	assertHasError(t, nodePool(tgp(apis.Never)), "spec.template.spec.terminationGracePeriod", field.ErrorTypeInvalid)
	assertHasError(t, nodePool(budget(apis.Never)), "spec.disruption.budgets[0].duration", field.ErrorTypeInvalid)
}
