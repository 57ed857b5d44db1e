package scheduling_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/core/scheduling"
	. "github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
)

// changeNodes changes a cluster as a disruption command does: some nodes go, some of their pods
// are bound to other nodes (new slices, the old ones untouched), a node finishes initializing (a
// new Node object, as its labels change), and a new node comes with pods of a label class no node
// had (so the classes numbered before must be extended, not renumbered).
func changeNodes(nodes []scheduling.ExistingNode, r *rand.Rand, step int) []scheduling.ExistingNode {
	out := make([]scheduling.ExistingNode, 0, len(nodes)+1)
	var moved []*corev1.Pod
	for _, n := range nodes {
		if len(nodes) > 3 && r.IntN(5) == 0 {
			moved = append(moved, n.Pods...)
			continue
		}
		if !n.Initialized && r.IntN(2) == 0 {
			node := n.Node.DeepCopy()
			node.Labels[scheduling.LabelNodeInitalized] = "true"
			n.Node, n.Initialized = node, true
		}
		out = append(out, n)
	}
	for _, p := range moved {
		i := r.IntN(len(out))
		out[i].Pods = append(slices.Clip(out[i].Pods), p)
	}
	name := fmt.Sprintf("new-%d", step)
	fresh := scheduling.ExistingNode{Node: Node(NodeOptions{Name: name, CPU: "8", Memory: "32Gi",
		Labels: map[string]string{scheduling.LabelZone: Zones[step%len(Zones)], scheduling.LabelArch: "amd64", scheduling.LabelOS: "linux"}}),
		Initialized: true}
	for j := range 3 {
		fresh.Pods = append(fresh.Pods, Pod(PodOptions{Name: fmt.Sprintf("%s-%d", name, j), CPU: "500m", Memory: "1Gi", NodeName: name,
			Labels: map[string]string{"app": fmt.Sprintf("class-%d", step)}}))
	}
	return append(out, fresh)
}

// TestPrepareFromMatchesPrepare: a Prepared made from an earlier one after the nodes changed plans,
// byte for byte, as Solve does on the changed cluster, whatever nodes a solve leaves out, over a
// chain of changes; and the earlier Prepared still plans its own cluster.
func TestPrepareFromMatchesPrepare(t *testing.T) {
	for seed := range uint64(30) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			in, _ := withReservations(randomInput(seed), seed)
			in = withExistingNodes(in, seed)
			r := rand.New(rand.NewPCG(seed, 7))
			check := func(p *scheduling.Prepared, in scheduling.Input, what string) {
				t.Helper()
				leaveOut := map[string]bool{}
				var nodes []scheduling.ExistingNode
				for _, n := range in.Nodes {
					if r.IntN(3) == 0 {
						leaveOut[n.Node.Name] = true
						continue
					}
					nodes = append(nodes, n)
				}
				want := in
				want.Nodes = nodes
				wantPlan, err := scheduling.Solve(want)
				require.NoError(t, err)
				gotPlan, err := p.Solve(in.Pods, leaveOut)
				require.NoError(t, err)
				wantJSON, err := json.Marshal(wantPlan)
				require.NoError(t, err)
				gotJSON, err := json.Marshal(gotPlan)
				require.NoError(t, err)
				require.Equal(t, string(wantJSON), string(gotJSON), "%s, %d nodes left out", what, len(leaveOut))
			}
			first := in
			prev := scheduling.Prepare(in)
			check(prev, in, "prepared")
			for step := range 3 {
				in.Nodes = changeNodes(in.Nodes, r, step)
				next := scheduling.PrepareFrom(prev, in)
				check(next, in, fmt.Sprintf("step %d", step))
				check(next, in, fmt.Sprintf("step %d again", step))
				prev = next
			}
			check(scheduling.PrepareFrom(nil, first), first, "from nil")
		})
	}
}

// TestPrepareFromLeavesTheEarlierAlone: solving on the earlier Prepared after PrepareFrom gives what
// it gave before.
func TestPrepareFromLeavesTheEarlierAlone(t *testing.T) {
	for seed := range uint64(10) {
		in, _ := withReservations(randomInput(seed), seed)
		in = withExistingNodes(in, seed)
		prev := scheduling.Prepare(in)
		before, err := prev.Solve(in.Pods, nil)
		require.NoError(t, err)
		changed := in
		changed.Nodes = changeNodes(in.Nodes, rand.New(rand.NewPCG(seed, 9)), 0)
		next := scheduling.PrepareFrom(prev, changed)
		_, err = next.Solve(changed.Pods, nil)
		require.NoError(t, err)
		after, err := prev.Solve(in.Pods, nil)
		require.NoError(t, err)
		b, _ := json.Marshal(before)
		a, _ := json.Marshal(after)
		require.Equal(t, string(b), string(a), "seed %d", seed)
	}
}
