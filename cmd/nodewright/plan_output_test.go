package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/core/scheduling"
)

func TestOptions(t *testing.T) {
	cases := []struct {
		name  string
		names []string
		want  string
	}{
		{name: "none", want: ""},
		{name: "few", names: []string{"a", "b"}, want: "a,b"},
		{name: "exactly three", names: []string{"a", "b", "c"}, want: "a,b,c"},
		{name: "more", names: []string{"a", "b", "c", "d", "e"}, want: "a,b,c (+2)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, options(tc.names))
		})
	}
}

func TestEmptyPlanOutput(t *testing.T) {
	var buf bytes.Buffer
	times := planTimes{read: 250 * time.Millisecond, solve: 1500 * time.Microsecond}
	require.NoError(t, writePlanJSON(&buf, &scheduling.Plan{}, times))
	assert.JSONEq(t, `{"nodeClaims":[],"existingNodes":[],"unschedulable":[],"totalPricePerHour":0,"lowerBoundPerHour":0,
		"costRatio":1,"readSeconds":0.25,"solveSeconds":0.0015,"solveMillis":1.5}`, buf.String())

	buf.Reset()
	require.NoError(t, writePlanTable(&buf, &scheduling.Plan{}, times, 0))
	assert.Equal(t, "claims: 0\npods: 0 pending; 0 on existing nodes, 0 on new claims, 0 unschedulable\n"+
		"cost: $0.0000/h, lower bound $0.0000/h, ratio 1.000\nsolve: 1.5ms (reading the input: 250ms)\n", buf.String())
}
