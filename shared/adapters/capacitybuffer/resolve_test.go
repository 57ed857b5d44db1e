package capacitybuffer

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

// TestBuffersNamingManyTemplatesResolveEachOnce: buffers naming more distinct templates than are read at
// once are each resolved, every template read once. The reads run concurrently; under `go test -race`
// this fails on code that hands out the targets by ranging over the map its readers write their results
// into (a concurrent map iteration and write, which can also stop the process with a fatal error).
func TestBuffersNamingManyTemplatesResolveEachOnce(t *testing.T) {
	n := 4*maxConcurrentReads + 3
	c := &fakeCluster{templates: map[string]*corev1.PodTemplate{}}
	for i := range n {
		name := fmt.Sprintf("web-%02d", i)
		c.templates["team/"+name] = &corev1.PodTemplate{Template: podTemplate("1", "1Gi")}
		c.buffers = append(c.buffers, bufferJSON(t, name, Spec{PodTemplateRef: &LocalObjectRef{Name: name}, Replicas: int32p(1)}))
	}
	set, err := Read(context.Background(), c)
	require.NoError(t, err)
	require.Len(t, set.Buffers, n)
	for _, b := range set.Buffers {
		assert.True(t, b.Ready, "%s: %s %s", b.Object.Key(), b.Reason, b.Message)
	}
	assert.Equal(t, n, c.gets, "each template read once")
	assert.Len(t, set.Pods(), n)
}
