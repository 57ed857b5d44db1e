package kube

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/client-go/kubernetes"

	"github.com/nodewright/nodewright/shared/testsupport/kubetest"
)

func TestMain(m *testing.M) { os.Exit(kubetest.Main(m)) }

// realCluster returns the shared local control plane's protobuf clientset and a fresh namespace.
func realCluster(t *testing.T, opts kubetest.Options) (*kubetest.ControlPlane, kubernetes.Interface, string) {
	t.Helper()
	cp := kubetest.Shared(t, opts)
	client, err := NewClientset(cp.Config)
	require.NoError(t, err)
	return cp, client, cp.Namespace(t)
}
