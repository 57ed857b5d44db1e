package termination

import (
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/assert"
)

func TestRedriveDelay(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	const progress, blocked = 5 * time.Second, 30 * time.Second
	cases := []struct {
		name        string
		progressing bool
		attempt     int
		next        time.Time
		want        time.Duration
	}{
		{"pods leaving: soon", true, 7, time.Time{}, 5 * time.Second},
		{"blocked on the first attempt", false, 1, time.Time{}, 5 * time.Second},
		{"blocked: the wait grows", false, 3, time.Time{}, 20 * time.Second},
		{"blocked for long: capped", false, 40, time.Time{}, 30 * time.Second},
		{"never past the next deadline deletion", false, 40, now.Add(12 * time.Second), 12 * time.Second},
		{"a deletion already due", true, 1, now.Add(-time.Second), 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, redriveDelay(tc.progressing, tc.attempt, tc.next, now, progress, blocked))
		})
	}
}

func TestDelaySecondsRoundsUpWithinSQSLimits(t *testing.T) {
	assert.Equal(t, int32(0), delaySeconds(0))
	assert.Equal(t, int32(2), delaySeconds(1100*time.Millisecond), "never back before it is due")
	assert.Equal(t, int32(900), delaySeconds(time.Hour))
}

func TestDrainedAtTravelsAsAMessageAttribute(t *testing.T) {
	at := "2026-11-22T12:00:01.5Z"
	rec := events.SQSMessage{MessageAttributes: map[string]events.SQSMessageAttribute{DrainedAtAttribute: {StringValue: &at, DataType: "String"}}}
	assert.Equal(t, time.Date(2026, 11, 22, 12, 0, 1, 500_000_000, time.UTC), drainedAtOf(rec))
	bad := "yesterday"
	rec.MessageAttributes[DrainedAtAttribute] = events.SQSMessageAttribute{StringValue: &bad}
	assert.True(t, drainedAtOf(rec).IsZero(), "unreadable: the volume wait starts over")
	assert.True(t, drainedAtOf(events.SQSMessage{}).IsZero())
}
