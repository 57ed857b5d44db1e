package faults

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/nodewright/nodewright/shared/testsupport/kubetest"
)

// kubeClient is an admin client of the shared control plane with the fault layer on its transport.
func kubeClient(t *testing.T, inj *Injector) (kubernetes.Interface, string) {
	cp := kubetest.Shared(t, kubetest.Options{})
	cfg := rest.CopyConfig(cp.Config)
	cfg.Wrap(inj.KubeTransport)
	c, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	return c, cp.Namespace(t)
}

func configMap(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// A 429 with Retry-After is retried by client-go, writes included; the write lands once.
func TestKubeThrottlingIsRetriedByClientGo(t *testing.T) {
	ctx := context.Background()
	inj := injector(t)
	c, ns := kubeClient(t, inj)
	require.NoError(t, inj.Arm(Rule{Target: Kube, Operation: "create", Resource: "configmaps", Kind: Throttle, Probability: 1, Limit: 1}))
	start := time.Now()
	_, err := c.CoreV1().ConfigMaps(ns).Create(ctx, configMap("a"), metav1.CreateOptions{})
	require.NoError(t, err)
	assert.GreaterOrEqual(t, time.Since(start), time.Second, "client-go waited the Retry-After")
	assert.Equal(t, 1, inj.Stats().Injected["kube/throttle"])
	assert.Equal(t, 2, inj.Stats().Calls[Kube], "the throttled attempt and its retry")
}

// A dropped GET is retried by client-go; a dropped write is not (it is not idempotent) and never reached
// the API server.
func TestKubeDroppedConnections(t *testing.T) {
	ctx := context.Background()
	inj := injector(t)
	c, ns := kubeClient(t, inj)
	require.NoError(t, inj.Arm(Rule{Target: Kube, Operation: "list", Kind: Drop, Probability: 1, Limit: 1}))
	_, err := c.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err, "client-go retried the GET")

	require.NoError(t, inj.Arm(Rule{Target: Kube, Operation: "create", Kind: Drop, Probability: 1, Limit: 1}))
	_, err = c.CoreV1().ConfigMaps(ns).Create(ctx, configMap("b"), metav1.CreateOptions{})
	require.ErrorIs(t, err, syscall.ECONNRESET)
	assert.True(t, IsInjected(err))
	_, err = c.CoreV1().ConfigMaps(ns).Get(ctx, "b", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "the dropped create was not sent: %v", err)
	assert.Equal(t, 2, inj.Stats().Injected["kube/dropped-connection"])
}

// A 500 is not retried by client-go: it surfaces as an InternalError status the callers classify.
func TestKubeServerErrorSurfaces(t *testing.T) {
	ctx := context.Background()
	inj := injector(t)
	c, ns := kubeClient(t, inj)
	require.NoError(t, inj.Arm(Rule{Target: Kube, Operation: "get", Resource: "configmaps", Kind: ServerError, Probability: 1}))
	_, err := c.CoreV1().ConfigMaps(ns).Get(ctx, "absent", metav1.GetOptions{})
	require.Error(t, err)
	assert.True(t, apierrors.IsInternalError(err), "%v", err)
	assert.True(t, IsInjected(err))
	assert.False(t, apierrors.IsNotFound(err), "the request never reached the API server")
	_, err = c.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err, "other verbs pass")
}
