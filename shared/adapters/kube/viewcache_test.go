package kube

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/nodewright/nodewright/shared/testsupport/kubetest"
)

// templates is a view's reading of the PodTemplates of namespace ns: a kind no controller and no other
// test writes, so that its watch cache moves only when this test moves it.
func templates(c kubernetes.Interface, ns string) kind[corev1.PodTemplate, *corev1.PodTemplate] {
	core := c.CoreV1()
	return kind[corev1.PodTemplate, *corev1.PodTemplate]{resource: "podtemplates", namespace: ns, rest: core.RESTClient(),
		list: typedList(core.PodTemplates(ns).List, func(l *corev1.PodTemplateList) ([]corev1.PodTemplate, metav1.ListMeta) {
			return l.Items, l.ListMeta
		}),
		watch: core.PodTemplates(ns).Watch, trim: trimMeta[*corev1.PodTemplate](SnapshotOptions{})}
}

// TestAWarmReadFromTheWatchCacheKnowsAnUnchangedKindAtOnce: the cluster moves on (a ConfigMap is
// written) while a kind stays as it was. A view probing the watch cache (FromCache) knows the kind
// unchanged without opening a watch; a view probing the cluster's revision has to catch the kind up to
// it, which, with no change of the kind to reach it, is the watch's bookmark (1 to 2.25 s). A change of
// the kind is caught up with a watch and seen. A consistent probe moves the kind's watch cache on (the
// API server asks etcd for a progress notification to serve it), past the kind's last change: the
// cached view then catches up by the bookmark once, and knows the kind unchanged at once again.
func TestAWarmReadFromTheWatchCacheKnowsAnUnchangedKindAtOnce(t *testing.T) {
	_, c, ns := realCluster(t, kubetest.Options{})
	ctx := context.Background()
	create := func(name, app string) {
		_, err := c.CoreV1().PodTemplates(ns).Create(ctx, &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Name: name},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "pause"}}}}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	create("a", "web")
	create("b", "web")
	k := templates(c, ns)
	cachedRule, consistentRule := catchUpRule{watchAfter: -1, fromCache: true}, catchUpRule{watchAfter: -1}
	var cached, consistent view[corev1.PodTemplate, *corev1.PodTemplate]
	for _, read := range []struct {
		rule catchUpRule
		v    *view[corev1.PodTemplate, *corev1.PodTemplate]
	}{{consistentRule, &consistent}, {cachedRule, &cached}} { // the consistent list moves the watch cache on: first
		items, mode, err := k.read(ctx, read.rule, read.v, 100)
		require.NoError(t, err)
		require.Equal(t, ReadListed, mode)
		require.Len(t, items, 2)
	}

	moveOn := func(name string) {
		_, err := c.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	moveOn("moves-the-cluster-on")
	items, mode, err := k.read(ctx, cachedRule, &cached, 100)
	require.NoError(t, err)
	assert.Equal(t, ReadUnchanged, mode, "the kind's watch cache did not move")
	assert.Len(t, items, 2)

	_, err = c.CoreV1().PodTemplates(ns).Patch(ctx, "b", "application/merge-patch+json",
		[]byte(`{"template":{"metadata":{"labels":{"app":"api"}}}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	// The watch cache trails etcd by a moment: until it holds the patch, a read finds the kind unchanged
	// and keeps the view as it was (a run then leaves the pod for the next one), never anything else.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		items, mode, err = k.read(ctx, cachedRule, &cached, 100)
		require.NoError(t, err)
		if mode != ReadUnchanged || time.Now().After(deadline) {
			break
		}
		require.Len(t, items, 2)
		require.Equal(t, "web", items[1].Template.Labels["app"], "a read before the cache has the change keeps the view as it was")
	}
	assert.Equal(t, ReadWatched, mode, "a change: caught up with a watch")
	require.Len(t, items, 2)
	assert.Equal(t, "api", items[1].Template.Labels["app"], "the change is seen")
	changed, err := c.CoreV1().PodTemplates(ns).Get(ctx, "b", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, changed.ResourceVersion, cached.rv, "the view stands at the kind's last change")

	moveOn("and-on") // past the kind's last change, so that the consistent probe asks for a progress notification

	_, mode, err = k.read(ctx, consistentRule, &consistent, 100)
	require.NoError(t, err)
	assert.Equal(t, ReadWatched, mode, "the cluster's revision moved on: the kind is caught up to it")
	items, mode, err = k.read(ctx, cachedRule, &cached, 100)
	require.NoError(t, err)
	assert.Equal(t, ReadWatched, mode, "the consistent probe moved the kind's watch cache on: caught up by the bookmark")
	assert.Equal(t, "api", items[1].Template.Labels["app"])
	_, mode, err = k.read(ctx, cachedRule, &cached, 100)
	require.NoError(t, err)
	assert.Equal(t, ReadUnchanged, mode, "and known unchanged at once again")
}

// TestACacheProbeBehindTheViewIsUnchanged: a view listed whole at the cluster's revision (by an API server
// that serves consistent lists from etcd) can stand past its kind's watch cache. The cache then holds no
// change the view lacks: the read is unchanged, and no watch is opened. The probe asks for a list not
// older than revision 1, never for the view's own revision (which would wait for the cache and fail).
func TestACacheProbeBehindTheViewIsUnchanged(t *testing.T) {
	var lists atomic.Int64
	src := source[corev1.Pod, *corev1.Pod]{
		watchAfter: -1, fromCache: true,
		req: listRequest{client: podListServer(t, &lists), resource: "pods", what: "pods", pageSize: 10},
		probe: func(_ context.Context, opts metav1.ListOptions) (string, error) {
			assert.Equal(t, metav1.ListOptions{Limit: 1, ResourceVersion: "1", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}, opts)
			return "85", nil
		},
		watch: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			t.Error("no watch: the cache has nothing the view lacks")
			return watch.NewEmptyWatch(), nil
		},
		trim: TrimPod,
	}
	var v view[corev1.Pod, *corev1.Pod]
	v.reset([]*corev1.Pod{podAt("a", "40")}, "90")
	mode, err := v.refresh(context.Background(), src)
	require.NoError(t, err)
	assert.Equal(t, ReadUnchanged, mode)
	assert.Zero(t, lists.Load())
	assert.Equal(t, "90", v.rv)
}
