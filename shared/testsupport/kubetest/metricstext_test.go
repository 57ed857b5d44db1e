package kubetest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSumCounterAddsEveryLabelSetOfOneMetric(t *testing.T) {
	text := `# HELP scheduler_schedule_attempts_total [STABLE] Number of attempts to schedule pods.
# TYPE scheduler_schedule_attempts_total counter
scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"} 12
scheduler_schedule_attempts_total{profile="default-scheduler",result="unschedulable"} 1003
scheduler_schedule_attempts_total_other{result="x"} 99
scheduler_schedule_attempts 7
`
	n, found := SumCounter(text, "scheduler_schedule_attempts_total")
	assert.True(t, found)
	assert.Equal(t, 1015.0, n)
	n, found = SumCounter(text, "scheduler_schedule_attempts")
	assert.True(t, found)
	assert.Equal(t, 7.0, n, "a metric without labels, and not those whose names only start with it")
	_, found = SumCounter(text, "absent_total")
	assert.False(t, found)
}

func TestSumSamplesKeepsOnlyTheLabelAskedFor(t *testing.T) {
	text := `rest_client_request_duration_seconds_sum{host="127.0.0.1:6443",verb="PATCH"} 1.5
rest_client_request_duration_seconds_sum{host="127.0.0.1:6443",verb="POST"} 9
rest_client_request_duration_seconds_sum{host="10.0.0.1:443",verb="PATCH"} 0.5
rest_client_request_duration_seconds_count{host="127.0.0.1:6443",verb="PATCH"} 40
`
	n, found := SumSamples(text, "rest_client_request_duration_seconds_sum", `verb="PATCH"`)
	assert.True(t, found)
	assert.Equal(t, 2.0, n, "both hosts' PATCHes, not the POSTs")
	_, found = SumSamples(text, "rest_client_request_duration_seconds_sum", `verb="DELETE"`)
	assert.False(t, found)
}
