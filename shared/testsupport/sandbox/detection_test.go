package sandbox

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDetectionFindsPendingPodsThroughTheirEvents runs the detection scenario small: kube-scheduler's
// FailedScheduling Events reach the webhook, Nodewright launches for the pods, every pod binds. The
// scheduler's rates are the report's to give (on a quiet machine), not this test's to judge.
func TestDetectionFindsPendingPodsThroughTheirEvents(t *testing.T) {
	sb := start(t)
	rep, err := sb.Detection(context.Background(), DetectionOptions{Pods: 40, Timeout: 2 * time.Minute, Pairs: 1})
	if err != nil || !rep.Worked() {
		dump(t, sb)
	}
	require.NoError(t, err)
	out, _ := json.Marshal(rep)
	t.Log(string(out))
	assert.True(t, rep.Worked(), "every pod bound, nothing leaked, no component error")
	assert.Zero(t, rep.LaunchesWithout, "pods no NodePool serves launch nothing")
	assert.Positive(t, rep.PodsMarked, "kube-scheduler failed pods (under load a late one may bind to a node that already joined)")
	assert.Positive(t, rep.WebhookRequests, "the webhook was called for the pods' Events")
	assert.Positive(t, rep.PendingToLaunchSeconds.N, "launches are matched to the pods they were for")
	assert.Positive(t, rep.PendingToWakeUpSeconds.N, "the webhook's answers are matched to the pods its Events were about")
	assert.Len(t, rep.SchedulerAttemptsPerSecondByPair, 1)
	require.Len(t, rep.ControlPlaneCPUSecondsByPair, 1)
	assert.Zero(t, rep.ControlPlaneCPUSecondsByPair[0].Without.WebhookCalls, "no webhook registered in the pass without")
	assert.Positive(t, rep.ControlPlaneCPUSecondsByPair[0].Without.APIServer+rep.ControlPlaneCPUSecondsByPair[0].Without.Scheduler,
		"the control plane's CPU is read from /proc")
	assert.Positive(t, rep.SchedulerAttemptsPerSecond.Without)
	assert.Positive(t, rep.SchedulerAttemptsPerSecond.WithDetection)
	assert.Equal(t, float64(DefaultPacedPodsPerSecond), rep.Paced.PodsPerSecond)
	require.Len(t, rep.Paced.ByPair, 1, "the paced pair ran too")
	assert.Positive(t, rep.Paced.SchedulerAttemptsPerSecond.Without)
	assert.Positive(t, rep.Paced.SchedulerAttemptsPerSecond.WithDetection)
	require.Len(t, rep.Paced.CPUByPair, 1)
	assert.Positive(t, rep.Paced.CPUByPair[0].WithDetection.WebhookCalls, "the paced pass with detection called the webhook")
}
