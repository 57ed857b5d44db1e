package interruption_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/flows/interruption"
	"github.com/nodewright/nodewright/shared/flows/interruption/messages"
	"github.com/nodewright/nodewright/shared/flows/interruption/messages/capacityreservation"
	"github.com/nodewright/nodewright/shared/flows/interruption/messages/scheduledchange"
	"github.com/nodewright/nodewright/shared/flows/interruption/messages/spotinterruption"
)

// eventsDir is the repository's events/ folder.
const eventsDir = "../../../events"

// sample is one EventBridge event file in events/ and what parsing it must give.
type sample struct {
	file        string
	wantKind    messages.Kind // set when the file parses
	wantEventID string
	wantIDs     []string
	// wantErr is "malformed" or "unknown kind" when the file must not parse.
	wantErr   string
	wantField string // for malformed samples
}

var eventSamples = []sample{
	{file: "interruption-spot-warning.json", wantKind: messages.SpotInterruptionKind, wantEventID: "5b3c1f0e-8d2a-4c6b-9e71-a4f0d2c9b813", wantIDs: []string{"i-0c4f8a2d61b7e9035"}},
	{file: "interruption-spot-warning-duplicate.json", wantKind: messages.SpotInterruptionKind, wantEventID: "5b3c1f0e-8d2a-4c6b-9e71-a4f0d2c9b813", wantIDs: []string{"i-0c4f8a2d61b7e9035"}},
	{file: "interruption-spot-warning-unknown-instance.json", wantKind: messages.SpotInterruptionKind, wantEventID: "a7e2d4c1-3b9f-4e58-8c06-1d5f7b2e9a40", wantIDs: []string{"i-0badc0ffee0ddf00d"}},
	{file: "interruption-rebalance-recommendation.json", wantKind: messages.RebalanceRecommendationKind, wantEventID: "c1d9e7a3-6f24-4b8e-a539-0e2b8f4c7d16", wantIDs: []string{"i-07d2e9b15a3c48f61"}},
	{file: "interruption-state-stopping.json", wantKind: messages.InstanceStoppedKind, wantEventID: "0f6b2a9d-4c1e-4d73-b8a5-92e3c7f1d064", wantIDs: []string{"i-0b8e3f1a92c4d7605"}},
	{file: "interruption-state-stopped.json", wantKind: messages.InstanceStoppedKind, wantEventID: "3e8c5d1a-7b20-4f96-a4c3-6d9e0b2f7a85", wantIDs: []string{"i-0b8e3f1a92c4d7605"}},
	{file: "interruption-state-shutting-down.json", wantKind: messages.InstanceTerminatedKind, wantEventID: "8a4f1c6e-2d93-4b07-95e8-c3b7a0d2f619", wantIDs: []string{"i-0f19a6c3d8e2b4570"}},
	{file: "interruption-state-terminated.json", wantKind: messages.InstanceTerminatedKind, wantEventID: "d2b7e0f4-9a15-4c38-8f6d-5e1a3c9b0d72", wantIDs: []string{"i-0f19a6c3d8e2b4570"}},
	{file: "interruption-state-running.json", wantKind: messages.NoOpKind, wantEventID: "6c0a3e9b-1f47-4d82-b6e5-7a2d8c4f1e03"},
	{file: "interruption-capacity-reservation-warning.json", wantKind: messages.CapacityReservationInterruptionKind, wantEventID: "9d5e2b7c-0a38-4f1d-87c6-b4e9a1f3d250", wantIDs: []string{"i-0a6d4c8e2f1b93750"}},
	{file: "interruption-health-ec2-scheduled-change.json", wantKind: messages.ScheduledChangeKind, wantEventID: "4f7a0c2e-b913-4e65-a8d1-3c6f9b2e0d47", wantIDs: []string{"i-03c7e1b9a5d2f6840", "i-09f2d8a4c6e1b3750"}},
	{file: "interruption-health-non-ec2.json", wantKind: messages.NoOpKind, wantEventID: "e5c2a8f1-7d4b-4e09-b3a6-0f8d1c5e9b27"},
	{file: "interruption-unknown-detail-type.json", wantErr: "unknown kind", wantEventID: "b0e4d7a2-5c19-4f83-9a6e-2d8b1f0c7e35"},
	{file: "interruption-malformed-json.json", wantErr: "malformed", wantField: "body"},
	{file: "interruption-malformed-missing-instance-id.json", wantErr: "malformed", wantEventID: "71f3b9d5-e2a0-4c84-b7d1-9e6c3a0f5b28", wantField: "detail.instance-id"},
}

// sqsSamples are Lambda SQS batch files in events/, read by TestParseSQSEventSample.
var sqsSamples = []string{"sqs-batch-interruption.json"}

func readSample(t testing.TB, name string) []byte {
	t.Helper()
	body, err := os.ReadFile(filepath.Join(eventsDir, name))
	require.NoError(t, err)
	return body
}

func TestEventSamples(t *testing.T) {
	for _, s := range eventSamples {
		t.Run(s.file, func(t *testing.T) {
			msg, err := interruption.Parse(readSample(t, s.file))
			switch s.wantErr {
			case "malformed":
				var m *messages.MalformedError
				require.True(t, errors.As(err, &m), "got %v", err)
				assert.Equal(t, s.wantEventID, m.EventID)
				assert.Equal(t, s.wantField, m.Field)
				assert.Nil(t, msg)
			case "unknown kind":
				var u *messages.UnknownKindError
				require.True(t, errors.As(err, &u), "got %v", err)
				assert.Equal(t, s.wantEventID, u.EventID)
				assert.Nil(t, msg)
			default:
				require.NoError(t, err)
				assert.Equal(t, s.wantKind, msg.Kind())
				assert.Equal(t, s.wantEventID, msg.EventID())
				assert.Equal(t, s.wantIDs, emptyAsNil(msg.InstanceIDs()))
				assert.False(t, msg.StartTime().IsZero())
			}
		})
	}
}

// TestEventSamplesDetails checks the kind-specific values the samples carry.
func TestEventSamplesDetails(t *testing.T) {
	msg, err := interruption.Parse(readSample(t, "interruption-spot-warning.json"))
	require.NoError(t, err)
	spot := msg.(spotinterruption.Message)
	assert.Equal(t, spotinterruption.ActionTerminate, spot.Detail.InstanceAction)
	assert.Equal(t, time.Date(2026, 11, 20, 14, 5, 11, 0, time.UTC), spot.ActionTime())

	msg, err = interruption.Parse(readSample(t, "interruption-health-ec2-scheduled-change.json"))
	require.NoError(t, err)
	sc := msg.(scheduledchange.Message)
	assert.Equal(t, "AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED", sc.Detail.EventTypeCode)
	assert.Equal(t, time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC), sc.WindowStart)
	assert.Equal(t, time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC), sc.WindowEnd)
	assert.Equal(t, sc.WindowStart, sc.Deadline())

	msg, err = interruption.Parse(readSample(t, "interruption-capacity-reservation-warning.json"))
	require.NoError(t, err)
	cr := msg.(capacityreservation.Message)
	assert.Equal(t, time.Date(2026, 11, 20, 16, 42, 0, 0, time.UTC), cr.Deadline())
	assert.Equal(t, "usw2-az2", cr.Detail.AvailabilityZoneID)

	// The duplicate is a redelivery: same event, same id, so the handler acts once.
	a, err := interruption.Parse(readSample(t, "interruption-spot-warning.json"))
	require.NoError(t, err)
	b, err := interruption.Parse(readSample(t, "interruption-spot-warning-duplicate.json"))
	require.NoError(t, err)
	assert.Equal(t, a, b)
}

// TestEverySampleIsListed fails when events/ holds an interruption or SQS sample no table lists, so a
// new sample cannot be forgotten, and when a listed sample is gone.
func TestEverySampleIsListed(t *testing.T) {
	listed := map[string]bool{}
	for _, s := range eventSamples {
		listed[s.file] = true
	}
	for _, f := range sqsSamples {
		listed[f] = true
	}
	entries, err := os.ReadDir(eventsDir)
	require.NoError(t, err)
	found := map[string]bool{}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		body, err := os.ReadFile(filepath.Join(eventsDir, e.Name()))
		require.NoError(t, err)
		if !looksLikeInterruptionSample(e.Name(), body) {
			continue
		}
		found[e.Name()] = true
		assert.True(t, listed[e.Name()], "events/%s looks like an EventBridge or SQS sample but no test table lists it", e.Name())
	}
	for name := range listed {
		assert.True(t, found[name], "events/%s is listed but missing or not recognised as a sample", name)
	}
}

// looksLikeInterruptionSample says whether an events/ file is ours to read: named for interruption, or
// carrying an EC2 or Health event (directly, or as the escaped body of an SQS record). Other functions'
// SQS samples (the provisioning queue's) are not, nor samples named for another function (the lifecycle
// function's trigger is an EC2 state change too; its own handler test reads it).
func looksLikeInterruptionSample(name string, body []byte) bool {
	if strings.HasPrefix(name, "interruption-") || strings.HasPrefix(name, "sqs-batch-interruption") {
		return true
	}
	for _, other := range []string{"lifecycle-", "provisioner-", "termination-", "webhook-"} {
		if strings.HasPrefix(name, other) {
			return false
		}
	}
	text := string(body)
	return slices.ContainsFunc([]string{`aws.ec2`, `aws.health`}, func(marker string) bool {
		return strings.Contains(text, marker)
	})
}

func TestLooksLikeInterruptionSample(t *testing.T) {
	assert.True(t, looksLikeInterruptionSample("interruption-new.json", []byte(`{`)))
	assert.True(t, looksLikeInterruptionSample("sqs-batch-interruption-2.json", nil))
	assert.True(t, looksLikeInterruptionSample("spot.json", []byte(`{"source": "aws.ec2"}`)))
	assert.True(t, looksLikeInterruptionSample("batch.json", []byte(`{"eventSource": "aws:sqs", "body": "{\"source\":\"aws.health\"}"}`)))
	assert.False(t, looksLikeInterruptionSample("provisioner-sqs-batch.json", []byte(`{"eventSource": "aws:sqs", "body": "{\"cluster\":\"demo\"}"}`)))
	assert.False(t, looksLikeInterruptionSample("admission-event-failedscheduling.json", []byte(`{"kind": "AdmissionReview"}`)))
	assert.False(t, looksLikeInterruptionSample("lifecycle-instance-running.json", []byte(`{"source": "aws.ec2"}`)), "another function's sample")
}

func emptyAsNil(ids []string) []string {
	if len(ids) == 0 {
		return nil
	}
	return ids
}
