package lifecycle

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/mirror"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// countedMirrors is a mirror API that holds nothing and counts the writes; its collection starts empty
// and its watches report no one else's change.
type countedMirrors struct {
	mu     sync.Mutex
	rev    int
	writes int
	names  map[string]bool
}

func (c *countedMirrors) ListMetadata(context.Context, metav1.ListOptions) (*metav1.PartialObjectMetadataList, error) {
	return &metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}, nil
}

func (c *countedMirrors) WatchMetadata(context.Context, metav1.ListOptions) (watch.Interface, error) {
	ch := make(chan watch.Event)
	close(ch)
	return watch.NewProxyWatcher(ch), nil
}

func (c *countedMirrors) write(name string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rev++
	c.writes++
	if c.names == nil {
		c.names = map[string]bool{}
	}
	c.names[name] = true
	return strconv.Itoa(c.rev + 1), nil
}

func (c *countedMirrors) Apply(_ context.Context, u *unstructured.Unstructured) (string, error) {
	return c.write(u.GetName())
}

func (c *countedMirrors) ApplyStatus(_ context.Context, u *unstructured.Unstructured) (string, error) {
	return c.write(u.GetName())
}

func (c *countedMirrors) Replace(_ context.Context, u, _ *unstructured.Unstructured) (string, error) {
	return c.write(u.GetName())
}

func (c *countedMirrors) Delete(_ context.Context, name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes++
	delete(c.names, name)
	return nil
}

// TestASecondPassOver5000UnchangedClaimsWritesNoMirror: at the ceiling's size, the pass after the mirrors
// were filled writes nothing, and the fill itself goes mirror.DefaultMaxWrites a pass.
func TestASecondPassOver5000UnchangedClaimsWritesNoMirror(t *testing.T) {
	const n = 5000
	created := testNow.Add(-time.Hour)
	var claims []state.Claim
	var nodes listedNodes
	var insts []instance.Instance
	for i := range n {
		name, id := fmt.Sprintf("default-%05d", i), fmt.Sprintf("i-0%016x", i)
		c := claimOn(name, "default", state.Initialized, id, "ip-"+name)
		c.CreatedAt, c.LaunchedAt, c.RegisteredAt, c.InitializedAt = created, &created, &created, &created
		c.InstanceType, c.CapacityType = "m5.large", "on-demand"
		claims = append(claims, c)
		insts = append(insts, instance.Instance{ID: id, LaunchTime: created, Tags: map[string]string{instance.TagNodeClaim: name}})
		node := ourNode("ip-"+name, id, false)
		node.Labels[InitializedLabel], node.Labels[RegisteredLabel] = "true", "true"
		node.Status.Capacity = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("8Gi")}
		nodes = append(nodes, node)
	}
	api := &countedMirrors{}
	now := testNow
	runner := func(max int) *Runner {
		return NewRunner(RunnerConfig{}, RunnerDeps{Store: &hookStore{fakeStore: fakeStore{claims: claims}, config: configItems()[:1]},
			Nodes: nodes, NodeActions: anyWrites{}, Instances: fakeInstances{list: insts}, Events: anyWrites{},
			Mirrors: mirror.NewWriter(mirror.NodeClaims, api, mirror.Options{MaxWrites: max}), Now: func() time.Time { return now }})
	}
	bounded := runner(0)
	rep, err := bounded.Run(context.Background(), "bounded")
	require.NoError(t, err)
	assert.Equal(t, mirror.DefaultMaxWrites, rep.MirrorsWritten, "a pass writes at most mirror.DefaultMaxWrites mirrors")
	assert.Equal(t, n-mirror.DefaultMaxWrites, rep.MirrorsLeft)

	r := runner(2 * n)
	rep, err = r.Run(context.Background(), "fill")
	require.NoError(t, err)
	assert.Equal(t, n, rep.MirrorsWritten, rep.String())
	assert.Len(t, api.names, n, "every claim has its mirror")

	api.writes = 0
	now = now.Add(10 * time.Minute)
	rep, err = r.Run(context.Background(), "steady")
	require.NoError(t, err)
	assert.Equal(t, 0, rep.MirrorsWritten, rep.String())
	assert.Equal(t, 0, api.writes, "a second pass with no change writes nothing")
	assert.Empty(t, rep.Errors)
}
