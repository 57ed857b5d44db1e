package kube

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

const (
	// TokenPrefix starts every EKS IAM bearer token; base64url of the presigned URL follows.
	TokenPrefix = "k8s-aws-v1."
	// ClusterIDHeader is the signed header that binds a token to one cluster.
	ClusterIDHeader = "x-k8s-aws-id"
	// TokenLifetime is how long EKS accepts a token after it was signed, whatever X-Amz-Expires says.
	TokenLifetime = 15 * time.Minute
	// TokenRefreshMargin is how long before TokenLifetime ends a cached token is replaced, so a request
	// in flight (and a clock a little off) never carries an expired token.
	TokenRefreshMargin = 2 * time.Minute
	// presignExpirySeconds is the X-Amz-Expires the presigned URL carries, as the EKS token format asks.
	presignExpirySeconds = "60"
)

// CallerIdentityPresigner presigns an STS GetCallerIdentity request; *sts.PresignClient satisfies it.
type CallerIdentityPresigner interface {
	PresignGetCallerIdentity(ctx context.Context, params *sts.GetCallerIdentityInput,
		optFns ...func(*sts.PresignOptions)) (*v4.PresignedHTTPRequest, error)
}

var _ CallerIdentityPresigner = (*sts.PresignClient)(nil)

// TokenSource hands out a bearer token for the API server.
type TokenSource interface {
	// Token returns a valid token, generating a new one when needed. It fails only when no token can be
	// made (e.g. no AWS credentials).
	Token(ctx context.Context) (string, error)
}

// Tokens generates EKS IAM tokens for one cluster and caches each until TokenRefreshMargin before it
// expires. It is safe for concurrent use.
type Tokens struct {
	presigner CallerIdentityPresigner
	cluster   string
	now       func() time.Time

	mu      sync.Mutex
	token   string
	expires time.Time
}

var _ TokenSource = (*Tokens)(nil)

// NewTokens returns a token source for cluster that signs with presigner and reads time from now.
func NewTokens(presigner CallerIdentityPresigner, cluster string, now func() time.Time) *Tokens {
	return &Tokens{presigner: presigner, cluster: cluster, now: now}
}

// NewTokensFromConfig returns a token source that signs with the credentials and region of cfg, against
// the regional STS endpoint.
func NewTokensFromConfig(cfg aws.Config, cluster string) *Tokens {
	return NewTokens(sts.NewPresignClient(sts.NewFromConfig(cfg)), cluster, time.Now)
}

// Token returns the cached token while it has more than TokenRefreshMargin left, else a new one.
func (t *Tokens) Token(ctx context.Context) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	if t.token != "" && now.Before(t.expires.Add(-TokenRefreshMargin)) {
		return t.token, nil
	}
	token, err := t.generate(ctx)
	if err != nil {
		return "", err
	}
	t.token, t.expires = token, now.Add(TokenLifetime)
	return token, nil
}

// Expiry returns when the cached token stops being accepted; zero when there is none.
func (t *Tokens) Expiry() time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.expires
}

// Invalidate drops the cached token so the next Token call signs a new one; used after a 401.
func (t *Tokens) Invalidate() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.token, t.expires = "", time.Time{}
}

func (t *Tokens) generate(ctx context.Context) (string, error) {
	if t.cluster == "" {
		return "", errors.New("generating EKS token: cluster name is empty")
	}
	req, err := t.presigner.PresignGetCallerIdentity(ctx, &sts.GetCallerIdentityInput{},
		sts.WithPresignClientFromClientOptions(sts.WithAPIOptions(addClusterID(t.cluster))))
	if err != nil {
		return "", fmt.Errorf("presigning GetCallerIdentity for cluster %s: %w", t.cluster, err)
	}
	return TokenPrefix + base64.RawURLEncoding.EncodeToString([]byte(req.URL)), nil
}

// addClusterID adds, before signing, the cluster header EKS checks and the expiry its token format
// asks for. The signer then lists the header in X-Amz-SignedHeaders.
func addClusterID(cluster string) func(*middleware.Stack) error {
	return func(stack *middleware.Stack) error {
		return stack.Build.Add(middleware.BuildMiddlewareFunc("NodewrightEKSClusterID",
			func(ctx context.Context, in middleware.BuildInput, next middleware.BuildHandler) (
				middleware.BuildOutput, middleware.Metadata, error) {
				if req, ok := in.Request.(*smithyhttp.Request); ok {
					req.Header.Set(ClusterIDHeader, cluster)
					q := req.URL.Query()
					q.Set("X-Amz-Expires", presignExpirySeconds)
					req.URL.RawQuery = q.Encode()
				}
				return next.HandleBuild(ctx, in)
			}), middleware.After)
	}
}
