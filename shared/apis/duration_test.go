package apis_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/apis"
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
