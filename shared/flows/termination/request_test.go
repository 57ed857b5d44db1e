package termination

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

// TestRequestFromANewerSenderIsAccepted: during a rolling deploy a request carrying a field this version
// does not know (a newer sender's, or a newer function's re-drive) is read, not dropped as malformed.
func TestRequestFromANewerSenderIsAccepted(t *testing.T) {
	const body = `{"claim":"default-abc","reason":"Interrupted","requestedAt":"2026-11-22T12:00:00Z","attempt":2,` +
		`"deadline":"2026-11-22T12:02:00Z","priority":"high","origin":{"kind":"spot"}}`
	req, err := ParseRequest(body)
	require.NoError(t, err)
	deadline := time.Date(2026, 11, 22, 12, 2, 0, 0, time.UTC)
	assert.Equal(t, Request{Claim: "default-abc", Reason: "Interrupted", RequestedAt: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC),
		Attempt: 2, Deadline: &deadline}, req)

	// Through the handler: the request is worked on (here its claim is gone), not logged as malformed.
	var logs bytes.Buffer
	s := NewService(Config{QueueURL: "http://queue", Log: slog.New(slog.NewJSONHandler(&logs, nil))},
		Deps{Store: &claimStore{claims: map[string]state.Claim{}}})
	resp := s.HandleBatch(context.Background(), batch(body))
	assert.Empty(t, resp.BatchItemFailures)
	assert.Contains(t, logs.String(), "nothing to terminate")
	assert.NotContains(t, logs.String(), "malformed")
}
