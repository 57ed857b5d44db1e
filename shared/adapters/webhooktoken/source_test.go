package webhooktoken

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/testsupport/awstest"
)

func TestMain(m *testing.M) { os.Exit(awstest.Main(m)) }

const (
	oldToken = "0ld7c2d7e61b04a8fa5d2c1e0b7a94f62aa11bb"
	newToken = "n3w9c2d7e61b04a8fa5d2c1e0b7a94f62cc22dd"
)

// countingSecrets passes calls to the real client and records them.
type countingSecrets struct {
	SecretsAPI
	mu     sync.Mutex
	stages []string
}

func (c *countingSecrets) GetSecretValue(ctx context.Context, in *secretsmanager.GetSecretValueInput, optFns ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error) {
	c.mu.Lock()
	c.stages = append(c.stages, aws.ToString(in.VersionStage))
	c.mu.Unlock()
	return c.SecretsAPI.GetSecretValue(ctx, in, optFns...)
}

func (c *countingSecrets) calls() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.stages)
}

// clock is a settable time source.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time          { return c.now }
func (c *clock) advance(d time.Duration) { c.now = c.now.Add(d) }

type fixture struct {
	client *secretsmanager.Client
	arn    string
	calls  *countingSecrets
	clock  *clock
	logs   *bytes.Buffer
}

// newFixture creates the token secret in moto holding oldToken.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	client := secretsmanager.NewFromConfig(awstest.Shared(t).Config())
	out, err := client.CreateSecret(context.Background(), &secretsmanager.CreateSecretInput{
		Name: aws.String("webhook-token"), SecretString: aws.String(oldToken)})
	require.NoError(t, err)
	return &fixture{client: client, arn: aws.ToString(out.ARN), calls: &countingSecrets{SecretsAPI: client},
		clock: &clock{now: time.Now()}, logs: &bytes.Buffer{}}
}

func (f *fixture) source(t *testing.T) *Source {
	t.Helper()
	s, err := New(f.calls, Options{SecretID: f.arn, Overlap: 10 * time.Minute, Now: f.clock.Now,
		Log: slog.New(slog.NewJSONHandler(f.logs, nil))})
	require.NoError(t, err)
	return s
}

func (f *fixture) rotate(t *testing.T, token string) {
	t.Helper()
	_, err := f.client.PutSecretValue(context.Background(), &secretsmanager.PutSecretValueInput{
		SecretId: aws.String(f.arn), SecretString: aws.String(token)})
	require.NoError(t, err)
}

// assertNoTokenLogged checks every log line the source wrote.
func (f *fixture) assertNoTokenLogged(t *testing.T) {
	t.Helper()
	for _, line := range strings.Split(f.logs.String(), "\n") {
		for _, tok := range []string{oldToken, newToken} {
			assert.NotContains(t, line, tok, "a token never reaches the logs")
		}
	}
	for _, stage := range f.calls.stages {
		assert.Contains(t, []string{StageCurrent, StagePrevious}, stage, "every read names its VersionStage")
	}
}

func TestRotationOverlap(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	warm := f.source(t)
	require.True(t, warm.Valid(ctx, oldToken))
	assert.False(t, warm.Valid(ctx, newToken), "not yet rotated")

	f.rotate(t, newToken)
	f.clock.advance(DefaultRefreshInterval)
	assert.True(t, warm.Valid(ctx, newToken), "a warm function follows the rotation without a restart")
	assert.True(t, warm.Valid(ctx, oldToken), "the previous token holds during the overlap")

	cold := f.source(t) // an instance started after the rotation
	assert.True(t, cold.Valid(ctx, oldToken), "a cold start inside the window accepts the previous token too")
	assert.True(t, cold.Valid(ctx, newToken))

	f.clock.advance(10*time.Minute + time.Second) // past the new version's CreatedDate + overlap
	for name, s := range map[string]*Source{"warm": warm, "cold": cold} {
		assert.False(t, s.Valid(ctx, oldToken), "%s: the previous token is refused after the overlap", name)
		assert.True(t, s.Valid(ctx, newToken), "%s", name)
	}
	later := f.source(t)
	assert.False(t, later.Valid(ctx, oldToken), "a cold start after the window grants no fresh overlap")
	assert.True(t, later.Valid(ctx, newToken))
	assert.Contains(t, f.logs.String(), "webhook token rotated")
	f.assertNoTokenLogged(t)
}

func TestUnknownTokensRefreshAtMostOncePerInterval(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	s := f.source(t)
	require.True(t, s.Valid(ctx, oldToken))
	first := f.calls.calls()
	for i := 0; i < 100; i++ {
		assert.False(t, s.Valid(ctx, "guess-"+strings.Repeat("x", i)))
	}
	assert.Equal(t, first, f.calls.calls(), "wrong tokens inside the refresh interval read nothing")
	f.clock.advance(DefaultRefreshInterval)
	for i := 0; i < 100; i++ {
		assert.False(t, s.Valid(ctx, "guess"))
	}
	assert.Equal(t, 2*first, f.calls.calls(), "one refresh per interval, however many wrong tokens arrive")
	assert.False(t, s.Valid(ctx, ""), "an empty token is never valid")
	f.assertNoTokenLogged(t)
}

func TestTTLRefreshesKnownTokens(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	s := f.source(t)
	require.True(t, s.Valid(ctx, oldToken))
	reads := f.calls.calls()
	f.clock.advance(DefaultTTL - time.Second)
	require.True(t, s.Valid(ctx, oldToken))
	assert.Equal(t, reads, f.calls.calls(), "a known token inside the TTL reads nothing")

	f.rotate(t, newToken)
	f.clock.advance(time.Second)
	require.True(t, s.Valid(ctx, oldToken), "the overlap still holds")
	assert.Greater(t, f.calls.calls(), reads, "the TTL expired: the secret was read again")
	reads = f.calls.calls()
	assert.True(t, s.Valid(ctx, newToken))
	assert.Equal(t, reads, f.calls.calls(), "the TTL refresh already brought the new token")
	f.assertNoTokenLogged(t)
}

func TestUnreadableSecret(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	s := f.source(t)
	require.True(t, s.Valid(ctx, oldToken))
	_, err := f.client.DeleteSecret(ctx, &secretsmanager.DeleteSecretInput{SecretId: aws.String(f.arn),
		ForceDeleteWithoutRecovery: aws.Bool(true)})
	require.NoError(t, err)
	f.clock.advance(DefaultTTL)
	assert.True(t, s.Valid(ctx, oldToken), "a failed refresh keeps the tokens held")
	assert.Contains(t, f.logs.String(), "reading the webhook token failed")

	// A cold start against a Secrets Manager that never answers: unauthorized within the fetch timeout,
	// and the next requests inside the refresh interval do not wait again.
	hole, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer hole.Close()
	go func() {
		for {
			c, err := hole.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	cfg := awstest.Shared(t).Config()
	cfg.BaseEndpoint = aws.String("http://" + hole.Addr().String())
	f.calls = &countingSecrets{SecretsAPI: secretsmanager.NewFromConfig(cfg)}
	cold := f.source(t)
	start := time.Now()
	assert.False(t, cold.Valid(ctx, oldToken))
	assert.Less(t, time.Since(start), DefaultFetchTimeout+time.Second, "the read gives up at its timeout")
	start = time.Now()
	assert.False(t, cold.Valid(ctx, oldToken))
	assert.Less(t, time.Since(start), 100*time.Millisecond, "no second wait inside the refresh interval")
	f.assertNoTokenLogged(t)
}

func TestNewRejectsBadOptions(t *testing.T) {
	client := secretsmanager.New(secretsmanager.Options{Region: "us-east-1"})
	_, err := New(client, Options{})
	assert.ErrorContains(t, err, "SecretID is required")
	_, err = New(nil, Options{SecretID: "arn"})
	assert.ErrorContains(t, err, "client is required")
	_, err = New(client, Options{SecretID: "arn", Overlap: -time.Second})
	assert.ErrorContains(t, err, "Overlap must not be negative")
}

func TestOverlapEndsBetweenRefreshes(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	s, err := New(f.calls, Options{SecretID: f.arn, Overlap: 30 * time.Second, Now: f.clock.Now,
		Log: slog.New(slog.NewJSONHandler(f.logs, nil))})
	require.NoError(t, err)
	f.rotate(t, newToken)
	require.True(t, s.Valid(ctx, oldToken), "inside the 30 s window")
	reads := f.calls.calls()
	f.clock.advance(32 * time.Second) // moto's CreatedDate has whole seconds
	assert.False(t, s.Valid(ctx, oldToken), "the window closed; no TTL refresh was needed to see it")
	assert.True(t, s.Valid(ctx, newToken))
	assert.Equal(t, reads+1, f.calls.calls(), "one refresh for the refused token (outside the window AWSPREVIOUS is not read)")
	f.assertNoTokenLogged(t)
}
