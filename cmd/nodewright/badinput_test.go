package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeTemp writes content to a file named name in a test directory and returns its path.
func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

// onePod is a pending pod whose container requests the given cpu and memory.
func onePod(cpu, memory string) string {
	return `apiVersion: v1
kind: Pod
metadata: {name: web-1, namespace: default}
spec:
  containers:
  - name: app
    image: app
    resources:
      requests: {cpu: "` + cpu + `", memory: "` + memory + `"}
`
}

// oneType is a one-entry catalog whose capacity, allocatable and price can be set.
func oneType(capacityCPU, price string) string {
	return `[{"name":"m5.large","cpuMillis":2000,"memoryMiB":8192,"pods":29,"arch":"amd64","os":"linux",
"labels":{"karpenter.k8s.aws/instance-category":"m","karpenter.k8s.aws/instance-generation":"5"},
"capacity":{"cpuMillis":` + capacityCPU + `,"memoryMiB":8192,"ephemeralStorageMiB":20480,"pods":29},
"allocatable":{"cpuMillis":1930,"memoryMiB":7000,"ephemeralStorageMiB":17408,"pods":29},
"offerings":[{"zone":"us-east-1a","capacityType":"on-demand","price":` + price + `,"available":true}]}]`
}

// TestPlanRefusesBadInputs: every input the scheduler cannot represent is refused before it solves,
// with exit 1 and an error that names the file, the object, the field and the reason.
func TestPlanRefusesBadInputs(t *testing.T) {
	okPods := onePod("100m", "100Mi")
	okTypes := oneType("2000", "0.096")
	tests := []struct {
		name               string
		pods, types, nodes string
		daemonSets         string
		wantErr            string
		wantOK             bool
	}{
		{name: "valid inputs plan", pods: okPods, types: okTypes, wantOK: true},
		{name: "negative cpu request", pods: onePod("-1", "1Gi"), types: okTypes,
			wantErr: "pods.yaml: document 1: pod default/web-1: container app: resources.requests.cpu: -1 is negative"},
		{name: "cpu request that overflows millicores", pods: onePod("1e18", "1Gi"), types: okTypes,
			wantErr: "pods.yaml: document 1: pod default/web-1: container app: resources.requests.cpu: 1e18 is too large (at most 9007199254740992m)"},
		{name: "memory request that overflows bytes", pods: onePod("1", "1e19"), types: okTypes,
			wantErr: "pod default/web-1: container app: resources.requests.memory: 10e18 is too large (at most 8Pi)"},
		{name: "negative catalog capacity", pods: okPods, types: oneType("-2000", "0.096"),
			wantErr: "instance-types.json: instanceTypes[0] (m5.large): capacity.cpuMillis -2000 is negative"},
		{name: "price that prints as +Inf", pods: okPods, types: oneType("2000", "1e308"),
			wantErr: "instance-types.json: instanceTypes[0] (m5.large): offerings[0]: price 1e+308 is too large (at most 100000 dollars an hour)"},
		{name: "negative price", pods: okPods, types: oneType("2000", "-0.1"),
			wantErr: "instance-types.json: instanceTypes[0] (m5.large): offerings[0]: price -0.1 is negative"},
		{name: "node with negative allocatable", pods: okPods, types: okTypes,
			nodes:   `{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"},"status":{"allocatable":{"cpu":"-4"}}}`,
			wantErr: "nodes.yaml: document 1: node n1: status.allocatable.cpu: -4 is negative"},
		{name: "node with overflowing capacity", pods: okPods, types: okTypes,
			nodes:   `{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"},"status":{"capacity":{"memory":"1e30"}}}`,
			wantErr: "nodes.yaml: document 1: node n1: status.capacity.memory: 1e30 is too large (at most 8Pi)"},
		{name: "daemonset with a negative request", pods: okPods, types: okTypes,
			daemonSets: `{"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"agent","namespace":"kube-system"},
"spec":{"selector":{},"template":{"spec":{"containers":[{"name":"agent","image":"a","resources":{"requests":{"cpu":"-100m"}}}]}}}}`,
			wantErr: "daemonsets.yaml: document 1: daemonset kube-system/agent: spec.template: container agent: resources.requests.cpu: -100m is negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"--pods", writeTemp(t, "pods.yaml", tt.pods), "--nodepools", planFile("nodepools.yaml"),
				"--instance-types", writeTemp(t, "instance-types.json", tt.types)}
			if tt.nodes != "" {
				args = append(args, "--nodes", writeTemp(t, "nodes.yaml", tt.nodes))
			}
			if tt.daemonSets != "" {
				args = append(args, "--daemonsets", writeTemp(t, "daemonsets.yaml", tt.daemonSets))
			}
			code, stdout, stderr := runPlanArgs(t, args...)
			if tt.wantOK {
				require.Equal(t, 0, code, stderr)
				assert.Contains(t, stdout, "1 on new claims")
				return
			}
			assert.Equal(t, 1, code, stderr)
			assert.Contains(t, stderr, tt.wantErr)
			assert.Empty(t, stdout, "nothing is planned from bad input")
		})
	}
}

// selfSignedPEM returns a CA certificate in PEM.
func selfSignedPEM(t *testing.T) []byte {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sandbox CA"}, IsCA: true, BasicConstraintsValid: true,
		NotBefore: time.Unix(0, 0), NotAfter: time.Unix(0, 0).Add(100 * 365 * 24 * time.Hour), KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func TestManifestsChecksTheCABundle(t *testing.T) {
	good := selfSignedPEM(t)
	tests := []struct {
		name    string
		content []byte
		code    int
		wantErr string
	}{
		{name: "a PEM certificate", content: good, code: 0},
		{name: "not PEM", content: []byte("this is not a certificate\n"), code: 1,
			wantErr: "--ca-bundle %s: no PEM CERTIFICATE block found"},
		{name: "a certificate block that does not parse", content: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("nope")}), code: 1,
			wantErr: "--ca-bundle %s: PEM block 1 is not an X.509 certificate"},
		{name: "a private key", content: pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte("secret")}), code: 1,
			wantErr: "--ca-bundle %s: PEM block 1 is of type PRIVATE KEY, want CERTIFICATE blocks only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "ca.pem")
			require.NoError(t, os.WriteFile(path, tt.content, 0o600))
			var out, errOut bytes.Buffer
			code := dispatch([]string{"manifests", "--webhook-url", "https://abc.lambda-url.us-east-1.on.aws/webhook/tok", "--ca-bundle", path},
				strings.NewReader(""), &out, &errOut)
			require.Equal(t, tt.code, code, errOut.String())
			if tt.code == 0 {
				assert.Contains(t, out.String(), "caBundle: ")
				return
			}
			assert.Contains(t, errOut.String(), strings.ReplaceAll(tt.wantErr, "%s", path))
			assert.Empty(t, out.String())
		})
	}
}

// TestCatalogExportRequiresRegion: without --region the command is a usage error and touches no AWS
// configuration (which would fall back to the instance metadata service).
func TestCatalogExportRequiresRegion(t *testing.T) {
	saved := loadAWSConfig
	t.Cleanup(func() { loadAWSConfig = saved })
	loaded := false
	loadAWSConfig = func(context.Context, string) (aws.Config, error) {
		loaded = true
		return aws.Config{}, nil
	}
	var out, errOut bytes.Buffer
	code := dispatch([]string{"catalog", "export"}, strings.NewReader(""), &out, &errOut)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut.String(), "nodewright catalog export: --region is required")
	assert.Contains(t, errOut.String(), "Usage: nodewright catalog export --region REGION")
	assert.False(t, loaded, "no AWS configuration is loaded")

	errOut.Reset()
	code = dispatch([]string{"catalog", "export", "--region", "us-east-1", "extra"}, strings.NewReader(""), &out, &errOut)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut.String(), `unexpected arguments ["extra"]`)
	assert.False(t, loaded)
}
