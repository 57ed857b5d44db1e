package lifecycle

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// burstRig is a rig with n launched claims default-000... whose Nodes ip-000... have joined, unregistered.
func burstRig(t *testing.T, n int) *rig {
	var claims []state.Claim
	r := newRig(t)
	for i := range n {
		name, id, nodeName := fmt.Sprintf("default-%03d", i), fmt.Sprintf("i-0%03d", i), fmt.Sprintf("ip-%03d", i)
		claims = append(claims, claimOn(name, "default", state.Launched, id, ""))
		r.nodes = append(r.nodes, node(nodeName, "aws:///us-east-1a/"+id, nil, unregistered))
		r.instances.list = append(r.instances.list, instance.Instance{ID: id, Tags: map[string]string{instance.TagNodeClaim: name}})
	}
	r.store.claims = claims
	r.store.config = r.store.config[:len(r.store.config)-1] // without the broken NodePool
	return r
}

// runWith makes one pass under ctx with cfg.
func (r *rig) runWith(t *testing.T, ctx context.Context, cfg RunnerConfig) RunReport {
	t.Helper()
	runner := NewRunner(cfg, RunnerDeps{Store: r.store, Nodes: r.nodes, NodeActions: r.writer,
		Instances: r.instances, Terminations: r.queue, Now: func() time.Time { return r.now }})
	rep, err := runner.Run(ctx, "run-1")
	require.NoError(t, err, "a pass that defers work is not an error")
	return rep
}

// callsOn returns the writer's calls on Node node, in order.
func (w *recWriter) callsOn(node string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, c := range w.calls {
		if strings.Fields(c)[1] == node {
			out = append(out, c)
		}
	}
	return out
}

func TestManyNodesAreRegisteredConcurrentlyEachInOrder(t *testing.T) {
	const n = 40
	r := burstRig(t, n)
	var inFlight, most atomic.Int32
	r.writer.before = func(string) {
		now := inFlight.Add(1)
		defer inFlight.Add(-1)
		for m := most.Load(); now > m && !most.CompareAndSwap(m, now); m = most.Load() {
		}
		time.Sleep(2 * time.Millisecond) // an API server round trip, so that workers overlap
	}

	rep := r.run(t)
	require.Empty(t, rep.Errors)
	assert.Equal(t, n, rep.Registered, rep.String())
	created := 0
	for _, k := range rep.NodesCreated {
		created += k
	}
	assert.Equal(t, n, created, "each registration counts once for nodes_created_total, however many workers")
	assert.Zero(t, rep.Deferred)
	assert.Greater(t, most.Load(), int32(1), "Nodes are written concurrently")
	assert.LessOrEqual(t, most.Load(), int32(DefaultWorkers), "by at most DefaultWorkers at once")
	for i := range n {
		name, nodeName := fmt.Sprintf("default-%03d", i), fmt.Sprintf("ip-%03d", i)
		c := r.store.claim(t, name)
		assert.Equal(t, state.Registered, c.Lifecycle, name)
		assert.Equal(t, nodeName, c.NodeName, name)
		assert.Equal(t, []string{"addFinalizer " + nodeName + " nodewright.sh/termination", "label " + nodeName,
			"untaint " + nodeName + " " + UnregisteredTaintKey}, r.writer.callsOn(nodeName),
			"each Node is opened in order: finalizer, labels, then the unregistered taint lifted")
		assert.Equal(t, []string{"Registered/Registered"}, r.store.decisionsOf("nodeclaim/"+name))
	}
}

func TestAPassNearItsDeadlineDefersWorkAndTheNextPassFinishesIt(t *testing.T) {
	const n = 30
	const margin = 2 * time.Second
	cases := []struct {
		name string
		// left is how far past the margin the deadline is when the pass starts; the first Node writes
		// take until the margin is reached.
		left time.Duration
		// maxDone is how many registrations the first pass may finish (those started before the margin).
		maxDone int
	}{
		{name: "deadline already within the margin: nothing is started", left: -time.Second, maxDone: 0},
		{name: "margin reached while the first Nodes are written: those finish, the rest waits", left: 400 * time.Millisecond,
			maxDone: DefaultWorkers},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := burstRig(t, n)
			deadline := time.Now().Add(margin + tc.left)
			ctx, cancel := context.WithDeadline(context.Background(), deadline)
			defer cancel()
			r.writer.before = func(string) {
				time.Sleep(time.Until(deadline.Add(-margin)) + 20*time.Millisecond)
				assert.NoError(t, ctx.Err(), "no Node write runs past the deadline")
			}

			first := r.runWith(t, ctx, RunnerConfig{DeferMargin: margin})
			assert.Empty(t, first.Errors, "deferred work is not an error")
			assert.Positive(t, first.Deferred, first.String())
			assert.LessOrEqual(t, first.Registered, tc.maxDone)
			assert.Equal(t, n, first.Registered+first.Deferred, "every claim is either registered or deferred")
			assert.Contains(t, first.Skipped, "deadline")
			deferred := map[string]bool{}
			for i := range n {
				name, nodeName := fmt.Sprintf("default-%03d", i), fmt.Sprintf("ip-%03d", i)
				if !strings.HasPrefix(first.Waiting[name], "Deferred") {
					continue
				}
				deferred[nodeName] = true
				assert.Equal(t, state.Launched, r.store.claim(t, name).Lifecycle, "a deferred claim is left as read")
				assert.Empty(t, r.writer.callsOn(nodeName), "a deferred claim's Node is not touched")
			}
			assert.Len(t, deferred, first.Deferred, "Waiting names each deferred claim")

			r.writer.before = nil
			next := r.runWith(t, context.Background(), RunnerConfig{DeferMargin: margin})
			require.Empty(t, next.Errors)
			assert.Equal(t, first.Deferred, next.Registered, "the next pass finds the deferred claims and registers them")
			assert.Zero(t, next.Deferred)
			for i := range n {
				name, nodeName := fmt.Sprintf("default-%03d", i), fmt.Sprintf("ip-%03d", i)
				assert.Equal(t, state.Registered, r.store.claim(t, name).Lifecycle, name)
				if deferred[nodeName] {
					assert.Len(t, r.writer.callsOn(nodeName), 3, "a deferred Node is opened once, by the next pass")
				}
			}
		})
	}
}
