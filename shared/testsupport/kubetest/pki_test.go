package kubetest

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPKIServingCertificateVerifiesForLoopback(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	p, err := newPKI(dir, now)
	require.NoError(t, err)

	roots := x509.NewCertPool()
	require.True(t, roots.AppendCertsFromPEM(p.CAPEM))
	certPEM, err := os.ReadFile(p.CertFile)
	require.NoError(t, err)
	block, _ := pem.Decode(certPEM)
	require.NotNil(t, block)
	cert, err := x509.ParseCertificate(block.Bytes)
	require.NoError(t, err)

	for _, name := range []string{"127.0.0.1", "localhost", "kubernetes.default.svc"} {
		_, err := cert.Verify(x509.VerifyOptions{DNSName: name, Roots: roots, CurrentTime: now})
		assert.NoError(t, err, "certificate should verify for %s", name)
	}
	_, err = cert.Verify(x509.VerifyOptions{DNSName: "example.com", Roots: roots, CurrentTime: now})
	assert.Error(t, err, "certificate must not verify for a foreign name")

	for _, f := range []string{p.KeyFile, p.SAPrivateFile} {
		st, err := os.Stat(f)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "%s must be private", f)
	}
}
