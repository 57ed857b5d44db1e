package lifecycle

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// anyWrites accepts every Node write and does nothing.
type anyWrites struct{}

func (anyWrites) Taint(context.Context, string, corev1.Taint) error         { return nil }
func (anyWrites) Untaint(context.Context, string, corev1.Taint) error       { return nil }
func (anyWrites) Label(context.Context, string, map[string]*string) error   { return nil }
func (anyWrites) Annotate(context.Context, string, map[string]string) error { return nil }
func (anyWrites) AddFinalizer(context.Context, string, string) error        { return nil }
func (anyWrites) RemoveFinalizer(context.Context, string, string) error     { return nil }
func (anyWrites) Publish(context.Context, kube.Event) (bool, error)         { return true, nil }

// BenchmarkPass5000Nodes is one pass over 5,000 initialized claims, their Ready Nodes and instances, with
// 50 claims launched whose Nodes have not joined: a sweep (every claim, every instance, every decision)
// and a pass between sweeps (the joining claims only). The fakes answer at once, so this is the pass's own
// CPU and allocations at the ceiling's size; reads and round trips are counted by
// TestAPassBetweenSweepsReadsOnlyTheJoiningClaims.
func BenchmarkPass5000Nodes(b *testing.B) {
	const n, joining = 5000, 50
	created := testNow.Add(-time.Hour)
	var claims []state.Claim
	var nodes listedNodes
	var insts []instance.Instance
	for i := range n + joining {
		name, id := fmt.Sprintf("default-%05d", i), fmt.Sprintf("i-0%016x", i)
		c := claimOn(name, "default", state.Initialized, id, "ip-"+name)
		c.CreatedAt, c.LaunchedAt = created, &created
		insts = append(insts, instance.Instance{ID: id, LaunchTime: created, Tags: map[string]string{instance.TagNodeClaim: name}})
		if i >= n {
			c.Lifecycle, c.NodeName = state.Launched, ""
			claims = append(claims, c)
			continue
		}
		claims = append(claims, c)
		node := ourNode("ip-"+name, id, false)
		node.Labels[InitializedLabel], node.Labels[RegisteredLabel] = "true", "true"
		node.Status.Capacity = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16Gi")}
		nodes = append(nodes, node)
	}
	for _, c := range []struct {
		name  string
		every time.Duration
	}{{"sweep", 0}, {"between-sweeps", time.Hour}} {
		b.Run(c.name, func(b *testing.B) {
			store := &hookStore{fakeStore: fakeStore{claims: claims}, config: configItems()}
			r := NewRunner(RunnerConfig{SweepEvery: c.every}, RunnerDeps{Store: store, Nodes: nodes, NodeActions: anyWrites{},
				Instances: fakeInstances{list: insts}, Events: anyWrites{}, Now: func() time.Time { return testNow }})
			_, err := r.Run(context.Background(), "first") // the first pass sweeps
			require.NoError(b, err)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				rep, err := r.Run(context.Background(), "run")
				require.NoError(b, err)
				require.Equal(b, joining, rep.Joining)
			}
		})
	}
}
