package disruption_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/core/disruption"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// BenchmarkDecide decides on generated clusters (see fragmented) and reports the simulations run,
// the pods left in the cluster and the nodes the command removes.
//
//   - fragmented: ~20 pods per node, 60% of them removed at random (fixed seed), at least one pod
//     left per node; with the 10% budget multi-node searches 10% of the nodes, with 100% all of them.
//   - full: the same before any pod is removed.
//   - packed-spot: nodes filled until no pod shape fits, all spot, spot-to-spot off: nothing can be
//     done, and the LP pre-check proves it for every candidate without a simulation.
//   - spread: fragmented, but a fifth of the deployments spread over zones (ScheduleAnyway), so
//     simulations cannot fold bound pods into allocatable (compact.go) and see every pod.
//   - pinned: fragmented, but every node carries a label of its own and runs one pod that selects
//     it (as pods pinned to local storage do), so every simulation fails and nothing tells so
//     beforehand: single-node simulates every candidate. This is the slowest path;
//     Options.TimeLeft bounds it in production.
//   - balanced: fragmented under the Balanced policy: every move is scored against the pool's totals
//     (one pass over the pool's pods per Decide) and hopeless candidates are skipped beforehand.
func BenchmarkDecide(b *testing.B) {
	cases := []struct {
		name        string
		nodes       int
		podsPerNode int
		removed     float64
		budget      string
		modify      func(disruption.Input)
	}{
		{name: "fragmented", nodes: 200, podsPerNode: 20, removed: 0.6, budget: "10%"},
		{name: "fragmented", nodes: 200, podsPerNode: 20, removed: 0.6, budget: "100%"},
		{name: "fragmented", nodes: 2000, podsPerNode: 20, removed: 0.6, budget: "10%"},
		{name: "fragmented", nodes: 2000, podsPerNode: 20, removed: 0.6, budget: "100%"},
		{name: "balanced", nodes: 2000, podsPerNode: 20, removed: 0.6, budget: "10%", modify: func(in disruption.Input) {
			in.NodePools[0].Policy = disruption.Balanced
		}},
		{name: "full", nodes: 2000, podsPerNode: 20, removed: 0, budget: "10%"},
		{name: "packed-spot", nodes: 2000, podsPerNode: 1000, removed: 0, budget: "10%", modify: func(in disruption.Input) {
			setCapacityType(in, scheduling.CapacityTypeSpot)
		}},
		{name: "spread", nodes: 2000, podsPerNode: 20, removed: 0.6, budget: "10%", modify: spreadSomeApps},
		{name: "spread", nodes: 2000, podsPerNode: 20, removed: 0.6, budget: "100%", modify: spreadSomeApps},
		{name: "pinned", nodes: 200, podsPerNode: 20, removed: 0.6, budget: "10%", modify: pinOnePodPerNode},
		{name: "pinned", nodes: 2000, podsPerNode: 20, removed: 0.6, budget: "10%", modify: pinOnePodPerNode},
	}
	for _, tc := range cases {
		b.Run(fmt.Sprintf("%s/nodes=%d/budget=%s", tc.name, tc.nodes, tc.budget), func(b *testing.B) {
			in := fragmented(tc.nodes, tc.podsPerNode, tc.removed, 42)
			in.NodePools[0].Budgets = []disruption.Budget{{Nodes: tc.budget}}
			if tc.modify != nil {
				tc.modify(in)
			}
			pods := 0
			for _, nd := range in.Nodes {
				pods += len(nd.Pods)
			}
			var res disruption.Result
			for b.Loop() {
				res = disruption.Decide(in)
			}
			b.ReportMetric(float64(res.Simulations), "sims")
			b.ReportMetric(float64(pods), "pods")
			removed := 0
			if len(res.Commands) > 0 {
				removed = len(res.Commands[0].Nodes)
			}
			b.ReportMetric(float64(removed), "removed")
		})
	}
}

// setCapacityType makes every node of in a ct node at that price.
func setCapacityType(in disruption.Input, ct string) {
	for i := range in.Nodes {
		n := &in.Nodes[i]
		n.CapacityType = ct
		n.Node.Labels[scheduling.LabelCapacityType] = ct
		for _, it := range in.InstanceTypes {
			if it.Name != n.InstanceType {
				continue
			}
			for _, o := range it.Offerings {
				if o.Zone == n.Zone && o.CapacityType == ct {
					n.Price = o.Price
				}
			}
		}
	}
}

// pinOnePodPerNode labels every node example.com/pin=<node> and gives its first pod that node
// selector; no NodePool defines the label, so no new node can take the pod either.
func pinOnePodPerNode(in disruption.Input) {
	for i := range in.Nodes {
		n := &in.Nodes[i]
		if len(n.Pods) == 0 {
			continue
		}
		n.Node.Labels["example.com/pin"] = n.Name()
		p := n.Pods[0].DeepCopy()
		p.Spec.NodeSelector = map[string]string{"example.com/pin": n.Name()}
		n.Pods = append([]*corev1.Pod{p}, n.Pods[1:]...)
	}
}

// spreadSomeApps gives the pods of every fifth deployment a soft zone spread constraint.
func spreadSomeApps(in disruption.Input) {
	for i := range in.Nodes {
		n := &in.Nodes[i]
		for j, p := range n.Pods {
			app := p.Labels["app"]
			if app == "" || (app[len(app)-1]-'0')%5 != 0 {
				continue
			}
			q := p.DeepCopy()
			q.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
				MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone, WhenUnsatisfiable: corev1.ScheduleAnyway,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
			}}
			n.Pods[j] = q
		}
	}
}
