package kube

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

func encodeProtobuf(t *testing.T, list *corev1.PodList) []byte {
	t.Helper()
	list.APIVersion, list.Kind = "v1", "PodList"
	var buf bytes.Buffer
	require.NoError(t, protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(list, &buf))
	return buf.Bytes()
}

func TestDecodeProtobufPage(t *testing.T) {
	body := encodeProtobuf(t, &corev1.PodList{
		ListMeta: metav1.ListMeta{ResourceVersion: "42", Continue: "next-page"},
		Items:    []corev1.Pod{*testPod("a", "n1", map[string]string{"app": "web"}), *testPod("b", "", nil)},
	})
	meta, err := decodeListMeta(body)
	require.NoError(t, err)
	assert.Equal(t, "next-page", meta.Continue)
	assert.Equal(t, "42", meta.ResourceVersion)

	existing := []corev1.Pod{*testPod("before", "", nil)}
	items, meta, err := decodePage[corev1.Pod](existing, body)
	require.NoError(t, err)
	assert.Equal(t, "42", meta.ResourceVersion)
	require.Len(t, items, 3, "items are appended")
	assert.Equal(t, "a", items[1].Name)
	assert.Equal(t, "web", items[1].Labels["app"])
	assert.Equal(t, "n1", items[1].Spec.NodeName)
	assert.Equal(t, "b", items[2].Name)

	for i := range body {
		body[i] = 0 // decoded items must not share the response buffer
	}
	assert.Equal(t, "web", items[1].Labels["app"])
}

func TestDecodeRejectsMalformedProtobuf(t *testing.T) {
	good := encodeProtobuf(t, &corev1.PodList{Items: []corev1.Pod{*testPod("a", "n1", nil)}})
	cases := map[string][]byte{
		"truncated":    good[:len(good)-3],
		"no list":      append([]byte("k8s\x00"), 0x0a, 0x00), // only an empty typeMeta
		"compressed":   append(append([]byte("k8s\x00"), 0x12, 0x01, 0x00), 0x1a, 0x04, 'g', 'z', 'i', 'p'),
		"bad tag":      []byte("k8s\x00\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"),
		"invalid JSON": []byte("{"),
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			_, _, err := decodePage[corev1.Pod](nil, body)
			assert.Error(t, err)
		})
	}
}

// TestStreamListRestartsAnExpiredContinuation serves JSON pages (the fallback the stream path accepts)
// and expires the continuation, as after an etcd compaction.
func TestStreamListRestartsAnExpiredContinuation(t *testing.T) {
	var mu sync.Mutex
	var queries []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		queries = append(queries, r.URL.RawQuery)
		mu.Unlock()
		q := r.URL.Query()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case q.Get("continue") != "":
			w.WriteHeader(http.StatusGone)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Expired","code":410,
				"message":"The provided continue parameter is too old"}`))
		case q.Get("limit") != "":
			_, _ = w.Write([]byte(`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"10","continue":"c1"},
				"items":[{"metadata":{"name":"a"},"spec":{"nodeName":"n1"}}]}`))
		default:
			_, _ = w.Write([]byte(`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"20"},
				"items":[{"metadata":{"name":"a"},"spec":{"nodeName":"n1"}},{"metadata":{"name":"b"}},
				{"metadata":{"name":"c"},"spec":{"nodeName":"n2"}}]}`))
		}
	}))
	defer srv.Close()
	c, err := NewClientset(&rest.Config{Host: srv.URL})
	require.NoError(t, err)
	rc := restClient(c.CoreV1().RESTClient())
	require.NotNil(t, rc)

	items, rv, err := streamList[corev1.Pod](context.Background(), listRequest{client: rc, resource: "pods",
		what: "pods", pageSize: 1, base: metav1.ListOptions{FieldSelector: nonTerminalPods}}, nil)
	require.NoError(t, err)
	assert.Equal(t, "20", rv)
	names := []string{}
	for _, p := range items {
		names = append(names, p.Name)
	}
	assert.Equal(t, []string{"a", "b", "c"}, names, "the restart replaces, never stitches, the pages")
	require.Len(t, queries, 3)
	assert.Contains(t, queries[0], "limit=1")
	assert.NotContains(t, queries[2], "limit=", "the restart is one unpaginated list")
	assert.Contains(t, queries[2], "fieldSelector=", "and keeps the selectors")
}

func TestStreamListFailsWhole(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("continue") != "" {
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403}`))
			return
		}
		_, _ = w.Write([]byte(`{"kind":"PodList","apiVersion":"v1","metadata":{"continue":"c1"},"items":[{"metadata":{"name":"a"}}]}`))
	}))
	defer srv.Close()
	c, err := NewClientset(&rest.Config{Host: srv.URL})
	require.NoError(t, err)

	snap, err := NewSnapshotter(c, SnapshotOptions{PageSize: 1}).Snapshot(context.Background())
	require.Error(t, err)
	assert.Nil(t, snap, "no partial data")
	assert.True(t, IsIncomplete(err))
	assert.True(t, IsForbidden(err), "%v", err)
}

func TestFlattenAndSplitKeepListedOrder(t *testing.T) {
	pages := [][]corev1.Pod{
		{*testPod("p1", "", nil), *testPod("b1", "n", nil), *testPod("p2", "", nil)},
		{*testPod("b2", "n", nil), *testPod("p3", "", nil), *testPod("b3", "n", nil)},
	}
	pods := flatten(pages)
	require.Len(t, pods, 6)
	ptrs := make([]*corev1.Pod, len(pods))
	for i := range pods {
		ptrs[i] = &pods[i]
	}
	bound, pending := splitPods(ptrs)
	assert.Equal(t, []string{"b1", "b2", "b3"}, podNames(bound))
	assert.Equal(t, []string{"p1", "p2", "p3"}, podNames(pending))
	assert.Same(t, &pods[1], bound[0], "no copies")
	assert.Same(t, &pages[0][0], &flatten(pages[:1])[0], "a single page is returned as is")
	assert.Nil(t, flatten[corev1.Pod](nil))
}
