package connect

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/pricing"
)

func vars(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// countingEKS answers DescribeCluster as EKS would and counts the calls.
type countingEKS struct{ calls int }

func (c *countingEKS) DescribeCluster(_ context.Context, in *eks.DescribeClusterInput, _ ...func(*eks.Options)) (*eks.DescribeClusterOutput, error) {
	c.calls++
	return &eks.DescribeClusterOutput{Cluster: &ekstypes.Cluster{Name: in.Name, Endpoint: aws.String("https://eks.example"),
		Version: aws.String("1.34"), CertificateAuthority: &ekstypes.Certificate{Data: aws.String("Q0E=")},
		KubernetesNetworkConfig: &ekstypes.KubernetesNetworkConfigResponse{ServiceIpv4Cidr: aws.String("10.100.0.0/16")}}}, nil
}

// testCA is a cluster CA as EKS returns it: base64 of a PEM certificate.
func testCA(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kubernetes"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	return base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

var cfg = aws.Config{Region: "eu-west-1", Credentials: aws.AnonymousCredentials{}}

func TestEveryMissingVariableIsNamedAtOnce(t *testing.T) {
	_, err := Load(context.Background(), vars(nil), Spec{Require: []string{"NODEWRIGHT_TERMINATION_QUEUE_URL"}, Kube: true, Store: &Store{}})
	require.Error(t, err)
	assert.Equal(t, "NODEWRIGHT_TERMINATION_QUEUE_URL, NODEWRIGHT_CLUSTER_NAME, NODEWRIGHT_STATE_TABLE required but not set", err.Error())

	_, err = Load(context.Background(), vars(map[string]string{"A": "x"}), Spec{Require: []string{"A", "A"}})
	assert.NoError(t, err, "a variable set once is enough, however often it is named")
}

func TestAClusterTheEnvironmentDescribesIsNotAskedOfEKS(t *testing.T) {
	api := &countingEKS{}
	env, err := connect(context.Background(), cfg, vars(map[string]string{kube.EnvClusterName: "prod",
		kube.EnvClusterEndpoint: "https://api.example", kube.EnvClusterCA: testCA(t)}), Spec{Kube: true}, api)
	require.NoError(t, err)
	assert.Zero(t, api.calls)
	assert.Equal(t, "prod", env.Cluster.Name)
	assert.Equal(t, "https://api.example", env.Cluster.Endpoint)
	assert.NotNil(t, env.Kube)
	require.NotNil(t, env.REST)
	assert.Equal(t, "https://api.example", env.REST.Host)
	assert.Nil(t, env.Prices, "not asked for")
	assert.Nil(t, env.Store, "not asked for")
}

func TestWhatALaunchingFunctionNeedsComesFromEKS(t *testing.T) {
	api := &countingEKS{}
	env, err := connect(context.Background(), cfg, vars(map[string]string{kube.EnvClusterName: "prod",
		kube.EnvClusterEndpoint: "https://api.example", kube.EnvClusterCA: testCA(t)}), Spec{Kube: true, Need: kube.Need{Nodes: true}}, api)
	require.NoError(t, err)
	assert.Equal(t, 1, api.calls, "the service CIDR and version are not in the environment")
	assert.Equal(t, "10.100.0.0/16", env.Cluster.ServiceCIDR)
}

func TestPricesAndStoreAreBuiltFromTheEnvironment(t *testing.T) {
	getenv := vars(map[string]string{EnvStateTable: "nodewright-prod", pricing.EnvIsolatedVPC: "true"})
	env, err := connect(context.Background(), cfg, getenv, Spec{Prices: true, Store: &Store{ClaimsView: true, PriceNote: true}}, &countingEKS{})
	require.NoError(t, err)
	require.NotNil(t, env.Prices)
	assert.True(t, env.Prices.Isolated())
	assert.NotNil(t, env.Store)
	assert.Equal(t, "nodewright-prod", env.Var(EnvStateTable))

	_, err = connect(context.Background(), cfg, vars(map[string]string{pricing.EnvIsolatedVPC: "yes"}), Spec{Prices: true}, &countingEKS{})
	assert.ErrorContains(t, err, pricing.EnvIsolatedVPC, "a malformed setting names its variable")
}

func TestAPriceNoteWithoutPricesIsAWiringMistake(t *testing.T) {
	_, err := Load(context.Background(), vars(map[string]string{EnvStateTable: "t"}), Spec{Store: &Store{PriceNote: true}})
	assert.ErrorContains(t, err, "needs Prices")
}
