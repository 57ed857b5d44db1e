package kube

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// TestAPageIsReadIntoABufferOfItsSize: a list page read into a buffer that doubles as it goes allocated
// about twice the page (a 42 MB page of pods: 64 MB of buffers, most of it garbage at once), whenever the
// collector had emptied the buffer pool. The next page of a kind is read into a buffer of the size of its
// last one: reading a 12 MB page again, with the pool emptied, allocates little more than the page
// (twice that in a race build, where bytes.Buffer allocates a grown buffer twice: see bufferAllocs).
func TestAPageIsReadIntoABufferOfItsSize(t *testing.T) {
	const size = 12 << 20
	body := []byte(`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[],"pad":"` + strings.Repeat("x", size) + `"}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body) // chunked: the client learns no length beforehand
	}))
	defer srv.Close()
	c, err := NewClientset(&rest.Config{Host: srv.URL})
	require.NoError(t, err)
	req := listRequest{client: restClient(c.CoreV1().RESTClient()), resource: "pods-bodysize-test", what: "pods"}
	opts := metav1.ListOptions{Limit: 500}

	read := func() uint64 {
		runtime.GC()
		runtime.GC() // twice: the pool's victim cache too
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		buf, err := req.fetchBody(context.Background(), opts)
		require.NoError(t, err)
		runtime.ReadMemStats(&after)
		require.Equal(t, len(body), buf.Len())
		bodyBuffers.Put(buf)
		return after.TotalAlloc - before.TotalAlloc
	}
	first := read()
	second := read()
	t.Logf("allocated reading a %d MB page: first %d MB, next %d MB", size>>20, first>>20, second>>20)
	assert.Less(t, second, bufferAllocs*uint64(size)*3/2, "the next page is read into one buffer of about its size")
}
