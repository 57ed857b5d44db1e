package kube

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/nodewright/nodewright/shared/testsupport/kubetest"
)

// countingTransport counts the response bytes the client reads.
type countingTransport struct {
	next http.RoundTripper
	read *atomic.Int64
}

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(r)
	if resp != nil && resp.Body != nil {
		resp.Body = &countingBody{ReadCloser: resp.Body, read: c.read}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	read *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.read.Add(int64(n))
	return n, err
}

func bulkyPod(name, node string) *corev1.Pod {
	p := testPod(name, node, map[string]string{"app": "web"})
	for i := range 20 {
		p.Spec.Containers[0].Env = append(p.Spec.Containers[0].Env, corev1.EnvVar{Name: fmt.Sprintf("SETTING_%d", i), Value: "a value an application reads at start"})
	}
	return p
}

func podKeys(snap *Snapshot) (bound, pending []string) {
	return podNames(snap.Bound), podNames(snap.Pending)
}

// TestAWarmSnapshotReadsOnlyWhatChanged reads a namespace twice with nothing changed and once after
// creating, changing, finishing and deleting pods and relabelling Nodes, and checks each warm read costs a
// small part of the cold one and sees exactly what a cold read of the same moment sees.
func TestAWarmSnapshotReadsOnlyWhatChanged(t *testing.T) {
	cp, admin, ns := realCluster(t, kubetest.Options{ControllerManager: true})
	ctx := context.Background()
	var read atomic.Int64
	cfg := rest.CopyConfig(cp.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return countingTransport{next: rt, read: &read} })
	c, err := NewClientset(cfg)
	require.NoError(t, err)

	sel := "view-test=" + ns
	node := func(name string) string {
		n := kubetest.ReadyNode(t, c, name, nil)
		_, err := c.CoreV1().Nodes().Patch(ctx, n, "application/merge-patch+json",
			[]byte(`{"metadata":{"labels":{"view-test":"`+ns+`"}}}`), metav1.PatchOptions{})
		require.NoError(t, err)
		return n
	}
	n0, n1 := node(ns+"-n0"), node(ns+"-n1")
	for i := range 40 {
		createPod(t, c, ns, bulkyPod(fmt.Sprintf("bound-%02d", i), n0), corev1.PodRunning)
	}
	for i := range 10 {
		createPod(t, c, ns, bulkyPod(fmt.Sprintf("pending-%02d", i), ""), "")
	}
	kinds := seedKinds(t, c, ns, 30)
	settle(t, admin, ns)
	opts := SnapshotOptions{PageSize: 7, Namespace: ns, NodeSelector: sel, WatchAfter: -1}
	s := NewSnapshotter(c, opts)

	read.Store(0)
	cold, err := s.Snapshot(ctx)
	require.NoError(t, err)
	coldBytes := read.Load()
	assert.Equal(t, ReadListed, cold.NodesRead)
	assert.Equal(t, ReadListed, cold.PodsRead)
	require.Len(t, cold.Bound, 40)
	assert.Nil(t, cold.Bound[0].Spec.Containers[0].Env, "pods are trimmed")
	require.Len(t, cold.KindsRead, 7)
	for k, mode := range cold.KindsRead {
		assert.Equal(t, ReadListed, mode, k)
	}
	assert.Len(t, cold.PVCs, 30)
	assert.Subset(t, objectNames(cold.PVs), kinds.pvs)
	assert.Empty(t, cold.PVCs[0].ManagedFields, "the other kinds are trimmed")
	assert.Nil(t, cold.DaemonSets[0].Spec.Template.Spec.Containers[0].Env, "a DaemonSet's template is trimmed as a pod is")

	read.Store(0)
	warm, err := s.Snapshot(ctx)
	require.NoError(t, err)
	assert.NotEqual(t, ReadListed, warm.PodsRead, "a warm read with nothing changed lists nothing")
	assert.NotEqual(t, ReadListed, warm.NodesRead)
	for k, mode := range warm.KindsRead {
		assert.NotEqual(t, ReadListed, mode, "a warm read with nothing changed lists no %s", k)
	}
	t.Logf("cold read %d bytes, warm read with nothing changed %d bytes", coldBytes, read.Load())
	assert.Less(t, read.Load(), coldBytes/5, "a warm read costs a small part of a cold one (%d of %d bytes)", read.Load(), coldBytes)
	wb, wp := podKeys(warm)
	cb, cpend := podKeys(cold)
	assert.Equal(t, cb, wb)
	assert.Equal(t, cpend, wp)

	// Changes of every kind.
	pods := c.CoreV1().Pods(ns)
	require.NoError(t, pods.Delete(ctx, "bound-00", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}))
	createPod(t, c, ns, bulkyPod("bound-99", n1), corev1.PodRunning)
	createPod(t, c, ns, bulkyPod("pending-99", ""), "")
	done, err := pods.Get(ctx, "bound-01", metav1.GetOptions{})
	require.NoError(t, err)
	done.Status.Phase = corev1.PodSucceeded
	_, err = pods.UpdateStatus(ctx, done, metav1.UpdateOptions{})
	require.NoError(t, err)
	_, err = pods.Patch(ctx, "bound-02", "application/merge-patch+json", []byte(`{"metadata":{"labels":{"app":"api"}}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	require.NoError(t, c.CoreV1().Pods(ns).Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "pending-00"},
		Target: corev1.ObjectReference{Kind: "Node", Name: n1}}, metav1.CreateOptions{}))
	_, err = c.CoreV1().Nodes().Patch(ctx, n0, "application/merge-patch+json", []byte(`{"metadata":{"labels":{"view-test":null}}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	n2 := node(ns + "-n2")
	kinds.change(t, c, ns)

	read.Store(0)
	after, err := s.Snapshot(ctx)
	require.NoError(t, err)
	assert.Equal(t, ReadWatched, after.PodsRead)
	assert.Equal(t, ReadWatched, after.NodesRead)
	for _, k := range []string{"persistentvolumeclaims", "persistentvolumes", "poddisruptionbudgets", "namespaces", "csinodes"} {
		assert.Equal(t, ReadWatched, after.KindsRead[k], "%s changed and are caught up with a watch", k)
	}
	assert.Less(t, read.Load(), coldBytes/2, "the changes cost less than a cold read (%d of %d bytes)", read.Load(), coldBytes)

	fresh, err := NewSnapshotter(c, opts).Snapshot(ctx)
	require.NoError(t, err)
	require.NoError(t, err)
	fb, fp := podKeys(fresh)
	ab, ap := podKeys(after)
	assert.Equal(t, fb, ab, "bound pods as a cold read of the same moment sees them")
	assert.Equal(t, fp, ap, "pending pods as a cold read of the same moment sees them")
	assert.NotContains(t, ab, "bound-00", "deleted")
	assert.NotContains(t, ab, "bound-01", "finished pods leave the view")
	assert.Contains(t, ab, "bound-99")
	assert.Contains(t, ab, "pending-00", "bound since")
	assert.Contains(t, ap, "pending-99")
	assert.Equal(t, []string{n1, n2}, names(after.Nodes, func(n *corev1.Node) string { return n.Name }))
	for _, p := range after.Bound {
		if p.Name == "bound-02" {
			assert.Equal(t, "api", p.Labels["app"], "changed pods carry the change")
			assert.Nil(t, p.Spec.Containers[0].Env, "and are trimmed")
		}
	}
	for _, p := range cold.Bound {
		if p.Name == "bound-02" {
			assert.Equal(t, "web", p.Labels["app"], "an earlier snapshot keeps the objects it was given")
		}
	}
	assert.GreaterOrEqual(t, after.PodsResourceVersion, after.NodesResourceVersion)

	// The other kinds as a cold read of the same moment sees them, their changes trimmed.
	assert.Equal(t, objectNames(fresh.PVCs), objectNames(after.PVCs))
	for _, pvc := range after.PVCs {
		if pvc.Name == "claim-00" { // kept by its protection finalizer until a controller takes it off
			assert.NotNil(t, pvc.DeletionTimestamp, "a deleted claim is seen being deleted")
		}
	}
	assert.Contains(t, objectNames(after.PVCs), "claim-99")
	assert.Equal(t, ours(objectNames(fresh.PVs), ns), ours(objectNames(after.PVs), ns))
	assert.Equal(t, objectNames(fresh.PDBs), objectNames(after.PDBs))
	assert.Equal(t, ours(objectNames(fresh.CSINodes), ns), ours(objectNames(after.CSINodes), ns))
	assert.Contains(t, objectNames(after.CSINodes), n2)
	assert.Equal(t, ours(objectNames(fresh.Namespaces), ns), ours(objectNames(after.Namespaces), ns))
	for _, pv := range after.PVs {
		if pv.Name == kinds.pvs[1] {
			assert.Equal(t, "changed", pv.Labels["state"], "changed volumes carry the change")
			assert.Empty(t, pv.ManagedFields, "and are trimmed")
		}
	}
	for _, n := range after.Namespaces {
		if n.Name == ns {
			assert.Equal(t, "payments", n.Labels["team"], "a relabelled namespace carries its labels")
		}
	}
}

// replay is a watch that replays events and then ends.
func replay(events ...watch.Event) func(context.Context, metav1.ListOptions) (watch.Interface, error) {
	return func(context.Context, metav1.ListOptions) (watch.Interface, error) {
		w := watch.NewFakeWithChanSize(len(events), false)
		for _, e := range events {
			w.Action(e.Type, e.Object)
		}
		w.Stop()
		return w, nil
	}
}

func podListServer(t *testing.T, lists *atomic.Int64) *rest.RESTClient {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		lists.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"90"},
			"items":[{"metadata":{"name":"a","namespace":"x","resourceVersion":"80"},"spec":{"nodeName":"n1"}}]}`))
	}))
	t.Cleanup(srv.Close)
	c, err := NewClientset(&rest.Config{Host: srv.URL})
	require.NoError(t, err)
	return restClient(c.CoreV1().RESTClient())
}

func podAt(name, rv string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "x", ResourceVersion: rv}}
}

// TestAViewTheServerCannotCatchUpIsListedWhole covers the ways a watch cannot bring a view forward:
// the revision is no longer in the server's history (410 as an error event or as the watch's answer),
// the watches end short of the probed revision, or the revisions are not numbers.
func TestAViewTheServerCannotCatchUpIsListedWhole(t *testing.T) {
	gone := &apierrors.NewResourceExpired("too old resource version").ErrStatus
	cases := map[string]struct {
		rv, target string
		watch      func(context.Context, metav1.ListOptions) (watch.Interface, error)
	}{
		"410 event": {rv: "50", target: "90", watch: replay(watch.Event{Type: watch.Error, Object: gone})},
		"410 answer": {rv: "50", target: "90", watch: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			return nil, apierrors.NewGone("too old")
		}},
		"ends short":   {rv: "50", target: "90", watch: replay(watch.Event{Type: watch.Bookmark, Object: podAt("", "60")})},
		"not a number": {rv: "fifty", target: "90", watch: replay()},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var lists atomic.Int64
			src := source[corev1.Pod, *corev1.Pod]{
				watchAfter: -1,
				req:        listRequest{client: podListServer(t, &lists), resource: "pods", what: "pods", pageSize: 10},
				probe:      func(context.Context, metav1.ListOptions) (string, error) { return tc.target, nil },
				watch:      tc.watch, trim: TrimPod,
			}
			var v view[corev1.Pod, *corev1.Pod]
			v.reset([]*corev1.Pod{podAt("stale", "40")}, tc.rv)
			mode, err := v.refresh(context.Background(), src)
			require.NoError(t, err)
			assert.Equal(t, ReadListed, mode)
			assert.Equal(t, int64(1), lists.Load())
			assert.Equal(t, "90", v.rv)
			assert.Equal(t, []string{"a"}, podNames(v.list()), "the list replaces the view")
		})
	}
}

// TestAViewIsCaughtUpByEventsInOrder applies adds, changes and deletes up to the probed revision, and
// stops at it without waiting for the watch to end.
func TestAViewIsCaughtUpByEventsInOrder(t *testing.T) {
	var lists atomic.Int64
	changed := podAt("a", "70")
	changed.Labels = map[string]string{"v": "2"}
	src := source[corev1.Pod, *corev1.Pod]{
		watchAfter: -1,
		req:        listRequest{client: podListServer(t, &lists), resource: "pods", what: "pods", pageSize: 10},
		probe:      func(context.Context, metav1.ListOptions) (string, error) { return "80", nil },
		watch: func(_ context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			assert.Equal(t, "50", opts.ResourceVersion, "from the view's revision")
			assert.True(t, opts.AllowWatchBookmarks)
			w := watch.NewFakeWithChanSize(4, false)
			w.Add(podAt("c", "60"))
			w.Modify(changed)
			w.Delete(podAt("b", "80"))
			w.Add(podAt("late", "81")) // past the probe: not waited for, may or may not be applied
			return w, nil
		},
		trim: TrimPod,
	}
	var v view[corev1.Pod, *corev1.Pod]
	v.reset([]*corev1.Pod{podAt("a", "40"), podAt("b", "45")}, "50")
	before := v.list()
	mode, err := v.refresh(context.Background(), src)
	require.NoError(t, err)
	assert.Equal(t, ReadWatched, mode)
	assert.Zero(t, lists.Load(), "nothing listed")
	assert.Equal(t, "80", v.rv)
	got := v.list()
	assert.Equal(t, []string{"a", "c"}, podNames(got))
	assert.Equal(t, "2", got[0].Labels["v"])
	assert.Equal(t, []string{"a", "b"}, podNames(before), "a list handed out earlier is not changed")

	src.probe = func(context.Context, metav1.ListOptions) (string, error) { return "80", nil }
	mode, err = v.refresh(context.Background(), src)
	require.NoError(t, err)
	assert.Equal(t, ReadUnchanged, mode, "the same revision: nothing to read")
}

// TestAKindThatListsFastIsListedAgain: a catch-up may wait about a second for the server's bookmark, so
// a kind whose whole list took less than WatchAfter is listed again rather than watched.
func TestAKindThatListsFastIsListedAgain(t *testing.T) {
	var lists atomic.Int64
	src := listOnlySource(t, &lists)
	var v view[corev1.Pod, *corev1.Pod]
	for range 2 {
		mode, err := v.refresh(context.Background(), src)
		require.NoError(t, err)
		assert.Equal(t, ReadListed, mode)
	}
	assert.Equal(t, int64(2), lists.Load())
	v.listTook = DefaultWatchAfter
	src.probe = func(context.Context, metav1.ListOptions) (string, error) { return v.rv, nil }
	mode, err := v.refresh(context.Background(), src)
	require.NoError(t, err)
	assert.Equal(t, ReadUnchanged, mode, "a kind that took WatchAfter to list is caught up instead")
}

// TestATinyKindIsListedAgainHoweverSlowlyItListed: one slow list (a busy API server) must not make a tiny
// kind wait for bookmarks on every later read: under relistBelow it is listed again.
func TestATinyKindIsListedAgainHoweverSlowlyItListed(t *testing.T) {
	var lists atomic.Int64
	src := listOnlySource(t, &lists)
	src.relistBelow = RelistBelowBytes
	var v view[corev1.Pod, *corev1.Pod]
	mode, err := v.refresh(context.Background(), src)
	require.NoError(t, err)
	assert.Equal(t, ReadListed, mode)
	require.Less(t, v.listBytes, int64(RelistBelowBytes), "the fixture's list is tiny")
	v.listTook = 10 * DefaultWatchAfter // as if that list had been slow
	mode, err = v.refresh(context.Background(), src)
	require.NoError(t, err)
	assert.Equal(t, ReadListed, mode, "listed again, not caught up")
	assert.Equal(t, int64(2), lists.Load())

	v.listTook, v.listBytes = 10*DefaultWatchAfter, RelistBelowBytes
	src.probe = func(context.Context, metav1.ListOptions) (string, error) { return v.rv, nil }
	mode, err = v.refresh(context.Background(), src)
	require.NoError(t, err)
	assert.Equal(t, ReadUnchanged, mode, "a kind of RelistBelowBytes is caught up")
}

// TestALargeKindIsWatchedHoweverFastItLists: a kind whose list is large (5,000 Nodes) is caught up with
// a watch even when listing it was quick, so a five-second pass does not read it whole every time.
func TestALargeKindIsWatchedHoweverFastItLists(t *testing.T) {
	var lists atomic.Int64
	probes := 0
	src := source[corev1.Pod, *corev1.Pod]{
		watchAfter: DefaultWatchAfter,
		req:        listRequest{client: podListServer(t, &lists), resource: "pods", what: "pods", pageSize: 10},
		trim:       TrimPod,
	}
	var v view[corev1.Pod, *corev1.Pod]
	src.probe = func(context.Context, metav1.ListOptions) (string, error) {
		probes++
		return v.rv, nil
	}
	mode, err := v.refresh(context.Background(), src)
	require.NoError(t, err)
	assert.Equal(t, ReadListed, mode)
	assert.Positive(t, v.listBytes, "the list's size is kept")
	v.listTook, v.listBytes = 0, WatchAfterBytes
	mode, err = v.refresh(context.Background(), src)
	require.NoError(t, err)
	assert.Equal(t, ReadUnchanged, mode)
	assert.Equal(t, 1, probes)
	assert.Equal(t, int64(1), lists.Load(), "listed once")
}

// listOnlySource is a pods source over podListServer (counting its lists in lists) whose probe and watch
// fail the test: the reads it serves must list the kind whole.
func listOnlySource(t *testing.T, lists *atomic.Int64) source[corev1.Pod, *corev1.Pod] {
	return source[corev1.Pod, *corev1.Pod]{
		watchAfter: DefaultWatchAfter,
		req:        listRequest{client: podListServer(t, lists), resource: "pods", what: "pods", pageSize: 10},
		probe: func(context.Context, metav1.ListOptions) (string, error) {
			t.Error("no probe")
			return "", nil
		},
		watch: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			t.Error("no watch")
			return nil, nil
		},
		trim: TrimPod,
	}
}
