package kube

import (
	"context"
	"encoding/base64"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/nodewright/nodewright/shared/testsupport/kubetest"
)

type seenRequest struct {
	path, auth, accept, contentType, userAgent string
}

func TestRESTConfigSendsRefreshedTokensOverProtobuf(t *testing.T) {
	var (
		mu        sync.Mutex
		seen      []seenRequest
		reject401 = true
	)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, seenRequest{r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("Accept"),
			r.Header.Get("Content-Type"), r.Header.Get("User-Agent")})
		unauthorized := reject401 && strings.HasSuffix(r.URL.Path, "/nodes/n1")
		reject401 = reject401 && !unauthorized
		mu.Unlock()
		if unauthorized {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Unauthorized","code":401}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"Node","apiVersion":"v1","metadata":{"name":"n1"}}`))
	}))
	defer srv.Close()
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})

	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	presigner := &countingPresigner{CallerIdentityPresigner: NewTokensFromConfig(testAWSConfig("us-east-1"), "c").presigner}
	tokens := NewTokens(presigner, "c", clock.Now)

	for name, ca := range map[string]string{"pem": string(caPEM), "base64": base64.StdEncoding.EncodeToString(caPEM)} {
		t.Run(name, func(t *testing.T) {
			cfg, err := RESTConfig(srv.URL, ca, tokens)
			require.NoError(t, err)
			assert.Equal(t, "application/vnd.kubernetes.protobuf", cfg.ContentType)
			assert.Equal(t, float32(DefaultQPS), cfg.QPS)
			assert.Equal(t, DefaultBurst, cfg.Burst)
			client, err := kubernetes.NewForConfig(cfg)
			require.NoError(t, err)
			for range 2 {
				_, err = client.CoreV1().Nodes().Get(context.Background(), "n1", metav1.GetOptions{})
			}
			require.NoError(t, err)
		})
	}

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, seen, 4)
	assert.Equal(t, 2, presigner.calls, "one token, dropped after the 401, then one reused by the other three requests")
	for _, r := range seen {
		assert.True(t, strings.HasPrefix(r.auth, "Bearer "+TokenPrefix), r.auth)
		assert.True(t, strings.HasPrefix(r.accept, "application/vnd.kubernetes.protobuf"), r.accept)
		assert.True(t, strings.HasPrefix(r.userAgent, "nodewright"), r.userAgent)
	}
}

func TestRESTConfigRejectsBadInput(t *testing.T) {
	tokens := NewTokensFromConfig(testAWSConfig("us-east-1"), "c")
	cases := []struct {
		name, endpoint, ca, want string
	}{
		{"plain http", "http://example.com", "x", "must be an https URL"},
		{"no host", "https://", "x", "must be an https URL"},
		{"empty CA", "https://example.com", "  ", "cluster CA is empty"},
		{"not base64", "https://example.com", "%%%", "neither PEM nor base64"},
		{"base64 of junk", "https://example.com", base64.StdEncoding.EncodeToString([]byte("junk")), "no PEM certificate"},
		{"PEM of junk", "https://example.com", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", "certificate"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := RESTConfig(c.endpoint, c.ca, tokens)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

type staticTokens string

func (s staticTokens) Token(context.Context) (string, error) { return string(s), nil }

// TestRESTConfigAgainstTheAPIServer builds a client from endpoint, CA and a token source, as a function
// does from its configuration, and uses it on the local control plane.
func TestRESTConfigAgainstTheAPIServer(t *testing.T) {
	cp := kubetest.Shared(t, kubetest.Options{})
	for name, tokens := range map[string]staticTokens{"admin token": staticTokens(cp.Config.BearerToken), "wrong token": "nope"} {
		t.Run(name, func(t *testing.T) {
			cfg, err := RESTConfig(cp.Config.Host, base64.StdEncoding.EncodeToString(cp.Config.CAData), tokens)
			require.NoError(t, err)
			client, err := kubernetes.NewForConfig(cfg)
			require.NoError(t, err)
			_, err = client.CoreV1().Namespaces().Get(context.Background(), "default", metav1.GetOptions{})
			if name == "admin token" {
				assert.NoError(t, err)
			} else {
				assert.True(t, IsUnauthorized(mapError(err)), "%v", err)
			}
		})
	}
}
