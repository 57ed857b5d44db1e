package footprint

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testCA returns a self-signed CA certificate and its key, DER-encoded.
func testCA(t *testing.T) (cert, key []byte) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, IsCA: true, BasicConstraintsValid: true,
		NotBefore: time.Unix(0, 0), NotAfter: time.Unix(0, 0).Add(100 * 365 * 24 * time.Hour), KeyUsage: x509.KeyUsageCertSign}
	cert, err = x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	require.NoError(t, err)
	key, err = x509.MarshalECPrivateKey(k)
	require.NoError(t, err)
	return cert, key
}

func TestCheckCABundle(t *testing.T) {
	cert, key := testCA(t)
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert})
	tests := []struct {
		name string
		data []byte
		err  string
	}{
		{name: "one certificate", data: certPEM},
		{name: "a chain with openssl's text around it", data: append(append([]byte("subject=CN = test CA\n"), certPEM...), certPEM...)},
		{name: "not PEM", data: []byte("not pem\n"), err: "no PEM CERTIFICATE block found"},
		{name: "DER instead of PEM", data: cert, err: "no PEM CERTIFICATE block found"},
		{name: "a private key", data: append(certPEM, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: key})...),
			err: "PEM block 2 is of type EC PRIVATE KEY, want CERTIFICATE blocks only"},
		{name: "a CERTIFICATE block that is not one", data: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("garbage")}),
			err: "PEM block 1 is not an X.509 certificate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckCABundle(tt.data)
			if tt.err == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.err)
		})
	}
}

func TestWebhookConfigurationRefusesABadCABundle(t *testing.T) {
	_, err := ValidatingWebhookConfiguration(WebhookOptions{URL: "https://example.lambda-url.us-east-1.on.aws/webhook/t", CABundle: []byte("not pem")})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "CA bundle: no PEM CERTIFICATE block found")
}
