package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/flows/lifecycle"
)

// burst launches n claims of the default NodePool named <prefix>-000... and joins their Nodes
// <prefix>-node-000..., unregistered and Ready, as a burst of booting instances does.
func (e *env) burst(t testing.TB, prefix string, n int) (claims, nodes []string) {
	t.Helper()
	for i := range n {
		claim, node := fmt.Sprintf("%s-%03d", prefix, i), fmt.Sprintf("%s-node-%03d", prefix, i)
		inst := e.launch(t, claim, "default")
		e.launchedClaim(t, claim, "default", inst)
		e.joinNode(t, node, inst, "default")
		claims, nodes = append(claims, claim), append(nodes, node)
	}
	return claims, nodes
}

// TestABurstOfNodesIsRegisteredInOnePass: 60 Nodes join at once. A pass whose deadline is already within
// its margin defers every one of them without an error and touches nothing; the next pass registers them
// all (claims and Nodes, concurrently), and the one after initializes them all.
func TestABurstOfNodesIsRegisteredInOnePass(t *testing.T) {
	const n = 60
	e := newEnv(t)
	claims, nodes := e.burst(t, "default-burst", n)
	r := e.runner(nil)

	near, cancel := context.WithTimeout(context.Background(), lifecycle.DefaultDeferMargin-time.Second)
	defer cancel()
	rep, err := r.Run(near, "run-near")
	require.NoError(t, err, "deferring is not an error")
	assert.Empty(t, rep.Errors)
	assert.Equal(t, n, rep.Deferred, rep.String())
	assert.Zero(t, rep.Registered)
	assert.Contains(t, rep.Skipped, "deadline")
	for i := range n {
		assert.Contains(t, rep.Waiting[claims[i]], "Deferred")
		assert.Equal(t, state.Launched, e.claim(t, claims[i]).Lifecycle)
		assert.Contains(t, taintKeys(e.node(t, nodes[i])), lifecycle.UnregisteredTaintKey+"=:NoExecute", "a deferred Node is not touched")
	}

	start := time.Now()
	rep, err = r.Run(context.Background(), "run-register")
	took := time.Since(start)
	require.NoError(t, err)
	require.Empty(t, rep.Errors)
	assert.Equal(t, n, rep.Registered, rep.String())
	assert.Zero(t, rep.Deferred)
	t.Logf("registered %d Nodes in one pass in %s (%d workers)", rep.Registered, took.Round(time.Millisecond), lifecycle.DefaultWorkers)
	for i := range n {
		c := e.claim(t, claims[i])
		assert.Equal(t, state.Registered, c.Lifecycle, claims[i])
		assert.Equal(t, nodes[i], c.NodeName, claims[i])
		node := e.node(t, nodes[i])
		assert.Equal(t, "true", node.Labels[lifecycle.RegisteredLabel], nodes[i])
		assert.Equal(t, "default", node.Labels["karpenter.sh/nodepool"], nodes[i])
		assert.NotContains(t, taintKeys(node), lifecycle.UnregisteredTaintKey+"=:NoExecute", nodes[i])
		assert.True(t, slices.Contains(node.Finalizers, kube.TerminationFinalizer), nodes[i])
		assert.Contains(t, e.decisions(t, "nodeclaim/"+claims[i]), "Registered/Registered")
	}

	start = time.Now()
	rep, err = r.Run(context.Background(), "run-initialize")
	took = time.Since(start)
	require.NoError(t, err)
	require.Empty(t, rep.Errors)
	assert.Equal(t, n, rep.Initialized, rep.String())
	t.Logf("initialized %d Nodes in one pass in %s", rep.Initialized, took.Round(time.Millisecond))
	for i := range n {
		assert.Equal(t, state.Initialized, e.claim(t, claims[i]).Lifecycle, claims[i])
		assert.Equal(t, "true", e.node(t, nodes[i]).Labels[lifecycle.InitializedLabel], nodes[i])
	}
}

// BenchmarkRegisterBurst times the pass that registers a burst of 50 joined Nodes (claim moved, Node
// given its finalizer, labels, and the unregistered taint lifted, an Event and a decision each), one
// worker against DefaultWorkers, on moto and the real API server. Set-up and the instance sweep are not
// timed; a pass after each timed one initializes the burst, so the next burst is registered alone.
func BenchmarkRegisterBurst(b *testing.B) {
	const n = 50
	for _, workers := range []int{1, lifecycle.DefaultWorkers} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			e := newEnv(b)
			r := e.runnerWith(lifecycle.RunnerConfig{Workers: workers, SweepEvery: time.Hour}, instance.New(e.ec2, cluster))
			ctx := context.Background()
			_, err := r.Run(ctx, "sweep")
			require.NoError(b, err)
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				e.burst(b, fmt.Sprintf("default-b%d", i), n)
				b.StartTimer()
				rep, err := r.Run(ctx, "register")
				b.StopTimer()
				require.NoError(b, err)
				require.Empty(b, rep.Errors)
				require.Equal(b, n, rep.Registered, rep.String())
				rep, err = r.Run(ctx, "initialize")
				require.NoError(b, err)
				require.Equal(b, n, rep.Initialized, rep.String())
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N*n), "ms/node")
		})
	}
}
