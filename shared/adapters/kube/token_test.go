package kube

import (
	"context"
	"encoding/base64"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testAWSConfig(region string) aws.Config {
	return aws.Config{
		Region:      region,
		Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "session-token"),
	}
}

// decodeToken undoes the EKS token encoding and parses the presigned URL inside.
func decodeToken(t *testing.T, token string) *url.URL {
	t.Helper()
	require.True(t, strings.HasPrefix(token, TokenPrefix), "token %q lacks the prefix", token)
	encoded := strings.TrimPrefix(token, TokenPrefix)
	assert.NotContains(t, encoded, "=", "base64url without padding")
	raw, err := base64.RawURLEncoding.DecodeString(encoded)
	require.NoError(t, err)
	u, err := url.Parse(string(raw))
	require.NoError(t, err)
	return u
}

func TestTokenIsAPresignedGetCallerIdentityURL(t *testing.T) {
	for _, region := range []string{"us-east-1", "eu-west-1", "ap-southeast-2"} {
		t.Run(region, func(t *testing.T) {
			tokens := NewTokensFromConfig(testAWSConfig(region), "prod-cluster")
			token, err := tokens.Token(context.Background())
			require.NoError(t, err)

			u := decodeToken(t, token)
			q := u.Query()
			assert.Equal(t, "https", u.Scheme)
			assert.Equal(t, "sts."+region+".amazonaws.com", u.Host, "the regional STS endpoint")
			assert.Equal(t, "GetCallerIdentity", q.Get("Action"))
			assert.Equal(t, "2011-06-15", q.Get("Version"))
			assert.Equal(t, "60", q.Get("X-Amz-Expires"))
			assert.Equal(t, "AWS4-HMAC-SHA256", q.Get("X-Amz-Algorithm"))
			assert.Contains(t, strings.Split(q.Get("X-Amz-SignedHeaders"), ";"), ClusterIDHeader)
			assert.Contains(t, strings.Split(q.Get("X-Amz-SignedHeaders"), ";"), "host")
			assert.Contains(t, q.Get("X-Amz-Credential"), "AKIDEXAMPLE/")
			assert.Contains(t, q.Get("X-Amz-Credential"), "/"+region+"/sts/aws4_request")
			assert.Equal(t, "session-token", q.Get("X-Amz-Security-Token"))
			assert.Len(t, q.Get("X-Amz-Signature"), 64)
		})
	}
}

func TestTokenNeedsAClusterName(t *testing.T) {
	_, err := NewTokensFromConfig(testAWSConfig("us-east-1"), "").Token(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cluster name is empty")
}

type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func TestTokenIsCachedAndRefreshedBeforeExpiry(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
	presigner := &countingPresigner{CallerIdentityPresigner: NewTokensFromConfig(testAWSConfig("us-east-1"), "c").presigner}
	tokens := NewTokens(presigner, "c", clock.Now)
	ctx := context.Background()

	first, err := tokens.Token(ctx)
	require.NoError(t, err)
	assert.Equal(t, clock.Now().Add(TokenLifetime), tokens.Expiry())

	steps := []struct {
		name      string
		advance   time.Duration
		wantCalls int
	}{
		{"fresh token is reused", time.Minute, 1},
		{"still reused just before the margin", TokenLifetime - TokenRefreshMargin - time.Minute - time.Second, 1},
		{"regenerated at the margin", time.Second, 2},
		{"the new one is reused", 5 * time.Minute, 2},
		{"regenerated again a lifetime later", TokenLifetime, 3},
	}
	for _, s := range steps {
		clock.Advance(s.advance)
		_, err := tokens.Token(ctx)
		require.NoError(t, err, s.name)
		assert.Equal(t, s.wantCalls, presigner.calls, s.name)
	}

	tokens.Invalidate()
	again, err := tokens.Token(ctx)
	require.NoError(t, err)
	assert.Equal(t, 4, presigner.calls, "invalidate forces a new token")
	assert.NotEmpty(t, first)
	assert.NotEmpty(t, again)
}

type countingPresigner struct {
	CallerIdentityPresigner
	calls int
}

func (p *countingPresigner) PresignGetCallerIdentity(ctx context.Context, params *sts.GetCallerIdentityInput,
	optFns ...func(*sts.PresignOptions)) (*v4.PresignedHTTPRequest, error) {
	p.calls++
	return p.CallerIdentityPresigner.PresignGetCallerIdentity(ctx, params, optFns...)
}
