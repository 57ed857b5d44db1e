package state

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRecordLaunchFailureCountsEachInstanceOnce: both detectors (interruption's state change, the
// lifecycle's sweep) may report the same instance, and a write may be retried; the class's count is of
// distinct instances.
func TestRecordLaunchFailureCountsEachInstanceOnce(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	kms := LaunchFailure{InstanceID: "i-1", At: t0, SpecHash: "h1", Code: "Client.InvalidKMSKey.InvalidState", Message: "The KMS key provided is in an incorrect state"}

	recorded, err := s.RecordLaunchFailure(ctx, "default", kms)
	require.NoError(t, err)
	assert.True(t, recorded)
	again := kms
	again.At = t0.Add(time.Minute) // the other detector, a minute later
	recorded, err = s.RecordLaunchFailure(ctx, "default", again)
	require.NoError(t, err)
	assert.False(t, recorded, "the same instance again is no new failure")
	second := kms
	second.InstanceID, second.At = "i-2", t0.Add(2*time.Minute)
	recorded, err = s.RecordLaunchFailure(ctx, "default", second)
	require.NoError(t, err)
	assert.True(t, recorded)
	_, err = s.RecordLaunchFailure(ctx, "gpu", LaunchFailure{InstanceID: "i-9", At: t0, Message: "a state-change notice"})
	require.NoError(t, err)
	recorded, err = s.RecordLaunchFailure(ctx, "gpu", LaunchFailure{InstanceID: "i-9", At: t0.Add(time.Minute), Code: "Client.InternalError",
		Message: "Client.InternalError: Client error on launch"})
	require.NoError(t, err)
	assert.False(t, recorded, "the lifecycle's report of an instance the interruption flow recorded only adds the state reason")

	records, invalid, err := s.ClassFailures(ctx)
	require.NoError(t, err)
	assert.Empty(t, invalid)
	require.Len(t, records, 2)
	assert.Equal(t, "default", records[0].NodeClass)
	assert.Equal(t, []LaunchFailure{kms, second}, records[0].Failures, "the first report of i-1 stands")
	b, held := records[0].Backoff("h1", time.Time{}, t0.Add(3*time.Minute))
	assert.True(t, held)
	assert.Equal(t, ClassBackoff{NodeClass: "default", Failures: 2, Last: second, Until: t0.Add(12 * time.Minute)}, b)
	assert.Contains(t, b.String(), "Client.InvalidKMSKey.InvalidState")
	assert.Equal(t, []LaunchFailure{{InstanceID: "i-9", At: t0, Code: "Client.InternalError", Message: "Client.InternalError: Client error on launch"}},
		records[1].Failures)
}

// TestRecordLaunchFailureRacesCountEveryInstance: concurrent reports of distinct instances all land.
func TestRecordLaunchFailureRacesCountEveryInstance(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	ids := []string{"i-a", "i-b", "i-c", "i-a"}
	for _, err := range race(len(ids), func(i int) error {
		_, err := s.RecordLaunchFailure(ctx, "default", LaunchFailure{InstanceID: ids[i], At: t0, Code: "Client.InternalError"})
		return err
	}) {
		require.NoError(t, err)
	}
	records, _, err := s.ClassFailures(ctx)
	require.NoError(t, err)
	require.Len(t, records, 1)
	assert.Len(t, records[0].Failures, 3)
}

// TestClassBackoffStartsOverWhenANodeInitializesOrTheSpecChanges: failures before the class's last
// initialized node, or of an earlier spec (an operator fixed kmsKeyID), hold nothing back.
func TestClassBackoffStartsOverWhenANodeInitializesOrTheSpecChanges(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	c := ClassFailures{NodeClass: "default", Failures: []LaunchFailure{
		{InstanceID: "i-1", At: t0, SpecHash: "old"},
		{InstanceID: "i-2", At: t0.Add(time.Minute), SpecHash: "old"},
		{InstanceID: "i-3", At: t0.Add(2 * time.Minute), SpecHash: "new"},
	}}
	now := t0.Add(3 * time.Minute)

	b, held := c.Backoff("old", time.Time{}, now)
	assert.True(t, held)
	assert.Equal(t, 2, b.Failures, "only the failures of the current spec count")
	assert.Equal(t, t0.Add(time.Minute+10*time.Minute), b.Until)

	b, held = c.Backoff("new", time.Time{}, now)
	assert.True(t, held)
	assert.Equal(t, 1, b.Failures)
	assert.Equal(t, "i-3", b.Last.InstanceID)

	_, held = c.Backoff("fixed", time.Time{}, now)
	assert.False(t, held, "a changed spec starts afresh")

	b, held = c.Backoff("", t0.Add(30*time.Second), now)
	assert.True(t, held)
	assert.Equal(t, 2, b.Failures, "a node initialized after i-1: only i-2 and i-3 count")
	_, held = c.Backoff("", t0.Add(2*time.Minute), now)
	assert.False(t, held, "a node initialized after the last failure: nothing counts")

	_, held = c.Backoff("new", time.Time{}, t0.Add(7*time.Minute))
	assert.False(t, held, "the back-off ends")

	init := t0.Add(90 * time.Second)
	earlier := t0
	assert.Equal(t, map[string]time.Time{"default": init}, ClassesInitializedAt([]Claim{
		{Name: "a", NodeClass: "default", InitializedAt: &earlier}, {Name: "b", NodeClass: "default", InitializedAt: &init},
		{Name: "c", NodeClass: "default"},
	}))
}

func TestClassBackoffDelayDoublesUpToAnHour(t *testing.T) {
	for n, want := range map[int]time.Duration{
		0: 0, 1: 5 * time.Minute, 2: 10 * time.Minute, 3: 20 * time.Minute, 4: 40 * time.Minute, 5: time.Hour, 6: time.Hour,
		40: time.Hour, 1 << 20: time.Hour,
	} {
		assert.Equal(t, want, ClassBackoffDelay(n), "n=%d", n)
	}
}

// TestAMalformedClassFailureRecordIsNamedAndSkipped: a record whose field cannot be read is reported
// with the field, the other classes' records are read, and a new failure replaces the bad record.
func TestAMalformedClassFailureRecordIsNamedAndSkipped(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	item := key(classFailuresPartition, "broken")
	item["failures"] = &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
		"i-1": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"at": str("yesterday")}},
	}}
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: item})
	require.NoError(t, err)
	_, err = s.RecordLaunchFailure(ctx, "default", LaunchFailure{InstanceID: "i-2", At: t0})
	require.NoError(t, err)

	records, invalid, err := s.ClassFailures(ctx)
	require.NoError(t, err)
	require.Len(t, records, 1)
	assert.Equal(t, "default", records[0].NodeClass)
	require.Len(t, invalid, 1)
	assert.ErrorIs(t, invalid[0], ErrInvalid)
	assert.Contains(t, invalid[0].Error(), `"broken"`)
	assert.Contains(t, invalid[0].Error(), "failures.i-1.at")

	recorded, err := s.RecordLaunchFailure(ctx, "broken", LaunchFailure{InstanceID: "i-3", At: t0})
	require.NoError(t, err)
	assert.True(t, recorded)
	records, invalid, err = s.ClassFailures(ctx)
	require.NoError(t, err)
	assert.Empty(t, invalid)
	assert.Len(t, records, 2)
}

// TestClassFailuresPastTheirTTLStartAfresh: DynamoDB deletes expired items lazily; a failure recorded
// after the item's ttl is the first of a new count, as if the item were gone.
func TestClassFailuresPastTheirTTLStartAfresh(t *testing.T) {
	ctx := context.Background()
	s, clock := newStore(t)
	_, err := s.RecordLaunchFailure(ctx, "default", LaunchFailure{InstanceID: "i-1", Code: "Client.InternalError"})
	require.NoError(t, err)
	clock.Advance(ClassBackoffMax + classFailuresRetention + time.Minute)
	_, err = s.RecordLaunchFailure(ctx, "default", LaunchFailure{InstanceID: "i-2", Code: "Client.InternalError"})
	require.NoError(t, err)
	records, _, err := s.ClassFailures(ctx)
	require.NoError(t, err)
	require.Len(t, records, 1)
	require.Len(t, records[0].Failures, 1)
	assert.Equal(t, "i-2", records[0].Failures[0].InstanceID)
	assert.Equal(t, clock.Now(), records[0].Failures[0].At, "a failure without a time is stamped with the store's clock")
}
