package sandbox

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/flows/podwebhook"
)

// TestSandboxWebhookSpeaksHTTP11Only: kube-apiserver would take HTTP/2 from a webhook on a loopback
// address and multiplex every call on one connection, but it asks a Function URL for HTTP/1.1 alone. The
// sandbox's webhook must not offer what production never gets.
func TestSandboxWebhookSpeaksHTTP11Only(t *testing.T) {
	w := startWebhook(&podwebhook.Intake{}, "t")
	defer w.close()
	roots := x509.NewCertPool()
	require.True(t, roots.AppendCertsFromPEM(w.caPEM))
	addr := strings.TrimPrefix(w.srv.URL, "https://")
	// As kube-apiserver's client dials a loopback webhook: HTTP/2 preferred.
	conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: roots, NextProtos: []string{"h2", "http/1.1"}, MinVersion: tls.VersionTLS12})
	require.NoError(t, err)
	defer conn.Close()
	assert.NotEqual(t, "h2", conn.ConnectionState().NegotiatedProtocol, "the sandbox's webhook offered HTTP/2")
	host, _, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	assert.True(t, net.ParseIP(host).IsLoopback(), "served on loopback, where kube-apiserver would use HTTP/2 if offered")
	assert.Equal(t, 1, w.connections(), "the connection was counted")
}
