package interruption_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/flows/interruption"
	"github.com/nodewright/nodewright/shared/flows/interruption/messages"
)

func TestParseSQSEventSample(t *testing.T) {
	var event events.SQSEvent
	require.NoError(t, json.Unmarshal(readSample(t, "sqs-batch-interruption.json"), &event))
	for _, r := range event.Records {
		assert.Equal(t, "aws:sqs", r.EventSource)
	}

	type want struct {
		messageID string
		kind      messages.Kind
		eventID   string
		ids       []string
		err       string
	}
	wants := []want{
		{messageID: "3b1e7d42-9c05-4a8f-b6e2-0d7f1a9c5e38", kind: messages.SpotInterruptionKind, eventID: "5b3c1f0e-8d2a-4c6b-9e71-a4f0d2c9b813", ids: []string{"i-0c4f8a2d61b7e9035"}},
		{messageID: "c8a0f6d3-1e74-4b29-95d7-2f4b8e0a6c13", kind: messages.SpotInterruptionKind, eventID: "5b3c1f0e-8d2a-4c6b-9e71-a4f0d2c9b813", ids: []string{"i-0c4f8a2d61b7e9035"}},
		{messageID: "5f2d9b8e-a037-4c61-8e4b-7d1c3a9f0e26", kind: messages.InstanceTerminatedKind, eventID: "d2b7e0f4-9a15-4c38-8f6d-5e1a3c9b0d72", ids: []string{"i-0f19a6c3d8e2b4570"}},
		{messageID: "e1c7a4f9-6b30-4d85-a2e8-9f0b5d3c7a14", kind: messages.ScheduledChangeKind, eventID: "4f7a0c2e-b913-4e65-a8d1-3c6f9b2e0d47", ids: []string{"i-03c7e1b9a5d2f6840", "i-09f2d8a4c6e1b3750"}},
		{messageID: "a9d3f1c6-2e58-4b07-9c4a-1b6e8d0f2a57", kind: messages.NoOpKind, eventID: "6c0a3e9b-1f47-4d82-b6e5-7a2d8c4f1e03"},
		{messageID: "7e4b0c2d-d96f-4a13-b58e-3c0a7f9e1d64", err: "unknown kind"},
		{messageID: "0d8f5a3b-7c21-4e96-a0b4-6e2d9c1f8b75", err: "malformed"},
	}

	results := interruption.ParseSQSEvent(event)
	require.Len(t, results, len(wants))
	for i, w := range wants {
		r := results[i]
		t.Run(w.messageID, func(t *testing.T) {
			assert.Equal(t, w.messageID, r.MessageID)
			switch w.err {
			case "unknown kind":
				assert.True(t, messages.IsUnknownKind(r.Err), "got %v", r.Err)
				assert.Contains(t, r.Err.Error(), w.messageID)
				assert.Nil(t, r.Message)
			case "malformed":
				var m *messages.MalformedError
				require.True(t, errors.As(r.Err, &m), "got %v", r.Err)
				assert.Equal(t, "body", m.Field)
				assert.Nil(t, r.Message)
			default:
				require.NoError(t, r.Err)
				assert.Equal(t, w.kind, r.Message.Kind())
				assert.Equal(t, w.eventID, r.Message.EventID())
				assert.Equal(t, w.ids, emptyAsNil(r.Message.InstanceIDs()))
			}
		})
	}
}

func TestParseSQSEvent(t *testing.T) {
	assert.Empty(t, interruption.ParseSQSEvent(events.SQSEvent{}))

	results := interruption.ParseSQSEvent(events.SQSEvent{Records: []events.SQSMessage{
		{MessageId: "m-1", Body: ""},
		{MessageId: "m-2", Body: string(readSample(t, "interruption-rebalance-recommendation.json"))},
	}})
	require.Len(t, results, 2)
	assert.Equal(t, "m-1", results[0].MessageID)
	assert.True(t, messages.IsMalformed(results[0].Err))
	assert.Equal(t, "m-2", results[1].MessageID)
	require.NoError(t, results[1].Err)
	assert.Equal(t, messages.RebalanceRecommendationKind, results[1].Message.Kind())
}
