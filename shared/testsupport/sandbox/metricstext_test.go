package sandbox

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
	n, found := sumCounter(text, "scheduler_schedule_attempts_total")
	assert.True(t, found)
	assert.Equal(t, 1015.0, n)
	n, found = sumCounter(text, "scheduler_schedule_attempts")
	assert.True(t, found)
	assert.Equal(t, 7.0, n, "a metric without labels, and not those whose names only start with it")
	_, found = sumCounter(text, "absent_total")
	assert.False(t, found)
}
