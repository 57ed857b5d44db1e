package kube

import (
	"bytes"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Client-side request budget. A Lambda invocation makes its calls in bursts (a snapshot, then a batch of
// evictions or taints) and then exits, so the budget is generous; the API server's priority and fairness
// still protects the cluster, and its 429s come back as ErrUnavailable.
const (
	DefaultQPS   = 100
	DefaultBurst = 300
	userAgent    = "nodewright"
)

// Invalidator is implemented by token sources that can drop a cached token after a 401.
type Invalidator interface{ Invalidate() }

// RESTConfig returns a client-go configuration for the API server at endpoint (an https URL) that
// trusts the cluster CA ca (PEM, or base64 of PEM as EKS DescribeCluster returns it) and authenticates
// every request with a bearer token from tokens, asked for per request so a refreshed token is used as
// soon as it exists.
func RESTConfig(endpoint, ca string, tokens TokenSource) (*rest.Config, error) {
	u, err := url.Parse(endpoint)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("cluster endpoint %q must be an https URL", endpoint)
	}
	caPEM, err := decodeCA(ca)
	if err != nil {
		return nil, err
	}
	if tokens == nil {
		return nil, errors.New("building the client configuration: no token source")
	}
	cfg := &rest.Config{Host: endpoint, TLSClientConfig: rest.TLSClientConfig{CAData: caPEM}}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &bearerTransport{tokens: tokens, next: rt} })
	return Tuned(cfg), nil
}

// Tuned returns a copy of cfg that speaks protobuf (with JSON accepted for types that have no protobuf
// form), asks for uncompressed responses, and has this adapter's request budget and user agent.
//
// Compression is off because the API server gzips a large list on one core as it streams it: for the
// 100 MB of protobuf a 30,000-pod list takes, that costs it seconds, more than sending the bytes over the
// AWS network to a function in the cluster's region saves, and the client then spends time inflating.
func Tuned(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.ContentType = runtime.ContentTypeProtobuf
	c.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	c.DisableCompression = true
	c.QPS, c.Burst = DefaultQPS, DefaultBurst
	if c.UserAgent == "" {
		c.UserAgent = userAgent
	}
	return c
}

func decodeCA(ca string) ([]byte, error) {
	ca = strings.TrimSpace(ca)
	if ca == "" {
		return nil, errors.New("cluster CA is empty")
	}
	data := []byte(ca)
	if !strings.HasPrefix(ca, "-----BEGIN") {
		decoded, err := base64.StdEncoding.DecodeString(ca)
		if err != nil {
			return nil, fmt.Errorf("cluster CA is neither PEM nor base64: %w", err)
		}
		data = decoded
	}
	block, _ := pem.Decode(bytes.TrimSpace(data))
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, errors.New("cluster CA holds no PEM certificate")
	}
	if _, err := x509.ParseCertificate(block.Bytes); err != nil {
		return nil, fmt.Errorf("cluster CA certificate: %w", err)
	}
	return data, nil
}

// bearerTransport sets the Authorization header from the token source on a copy of each request.
type bearerTransport struct {
	tokens TokenSource
	next   http.RoundTripper
}

func (b *bearerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	token, err := b.tokens.Token(req.Context())
	if err != nil {
		return nil, fmt.Errorf("getting a bearer token: %w", err)
	}
	r := req.Clone(req.Context())
	r.Header.Set("Authorization", "Bearer "+token)
	resp, err := b.next.RoundTrip(r)
	if err == nil && resp.StatusCode == http.StatusUnauthorized {
		if inv, ok := b.tokens.(Invalidator); ok {
			inv.Invalidate()
		}
	}
	return resp, err
}

// WrappedRoundTripper lets client-go's transport debugging see the wrapped transport.
func (b *bearerTransport) WrappedRoundTripper() http.RoundTripper { return b.next }

// NewClientset returns a clientset for cfg with this adapter's tuning (protobuf, request budget).
func NewClientset(cfg *rest.Config) (*kubernetes.Clientset, error) {
	c, err := kubernetes.NewForConfig(Tuned(cfg))
	if err != nil {
		return nil, fmt.Errorf("building the Kubernetes client: %w", err)
	}
	return c, nil
}
