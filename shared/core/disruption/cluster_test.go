package disruption_test

import (
	"fmt"
	"math/rand/v2"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/core/disruption"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
)

// fragmented builds a cluster of n nodes of the realistic catalog (amd64 m5, c5 and r5 sizes in three
// zones, spot and on-demand), filled with about podsPerNode pods of 50 deployments each, after which
// removed of every pod (a fraction) are deleted at random, keeping at least one pod per node so
// that consolidation, not emptiness, has to act. Everything comes from the seed.
func fragmented(n, podsPerNode int, removed float64, seed uint64) disruption.Input {
	r := rand.New(rand.NewPCG(seed, seed^0x5eed))
	catalog := schedulingtest.RealisticInstanceTypes()
	byName := map[string]*scheduling.InstanceType{}
	for _, it := range catalog {
		byName[it.Name] = it
	}
	types := []string{"m5.2xlarge", "m5.4xlarge", "c5.2xlarge", "c5.4xlarge", "r5.2xlarge"}
	type shape struct{ cpu, mem int64 }
	shapes := make([]shape, 50)
	for i := range shapes {
		shapes[i] = shape{cpu: 100 + 50*r.Int64N(14), mem: 128 << 20 * (1 + r.Int64N(16))}
	}
	in := disruption.Input{
		Now: now, InstanceTypes: catalog,
		NodePools: []disruption.NodePool{pool("default", amd64Only, budgets(disruption.Budget{Nodes: "10%"}))},
	}
	podID := 0
	for i := range n {
		it := byName[types[r.IntN(len(types))]]
		ct := scheduling.CapacityTypeOnDemand
		if r.IntN(2) == 0 {
			ct = scheduling.CapacityTypeSpot
		}
		zone := schedulingtest.Zones[r.IntN(len(schedulingtest.Zones))]
		name := fmt.Sprintf("node-%05d", i)
		var pods []*corev1.Pod
		free := shape{cpu: it.Allocatable.CPU, mem: it.Allocatable.Memory}
		for range 4 * podsPerNode {
			if len(pods) >= podsPerNode {
				break
			}
			k := r.IntN(len(shapes))
			s := shapes[k]
			if s.cpu > free.cpu || s.mem > free.mem {
				continue
			}
			free.cpu -= s.cpu
			free.mem -= s.mem
			app := fmt.Sprintf("app-%02d", k)
			p := schedulingtest.Pod(schedulingtest.PodOptions{
				Name: fmt.Sprintf("%s-%06d", app, podID), Owner: app, Labels: map[string]string{"app": app},
				CPU: fmt.Sprintf("%dm", s.cpu), Memory: fmt.Sprintf("%d", s.mem),
			})
			podID++
			pods = append(pods, p)
		}
		var keep []*corev1.Pod
		for _, p := range pods {
			if r.Float64() >= removed {
				keep = append(keep, p)
			}
		}
		if len(keep) == 0 && len(pods) > 0 {
			keep = pods[:1]
		}
		nd := node(catalog, nodeSpec{name, "default", it.Name, ct, keep})
		nd.Zone = zone
		nd.Node.Labels[scheduling.LabelZone] = zone
		for _, o := range it.Offerings {
			if o.Zone == zone && o.CapacityType == ct {
				nd.Price = o.Price
			}
		}
		in.Nodes = append(in.Nodes, nd)
	}
	return in
}

// shuffled returns a copy of in with every slice in another order.
func shuffled(in disruption.Input, seed uint64) disruption.Input {
	r := rand.New(rand.NewPCG(seed, seed+1))
	out := in
	out.Nodes = append([]disruption.Node{}, in.Nodes...)
	r.Shuffle(len(out.Nodes), func(i, j int) { out.Nodes[i], out.Nodes[j] = out.Nodes[j], out.Nodes[i] })
	for i := range out.Nodes {
		pods := append([]*corev1.Pod{}, out.Nodes[i].Pods...)
		r.Shuffle(len(pods), func(a, b int) { pods[a], pods[b] = pods[b], pods[a] })
		out.Nodes[i].Pods = pods
	}
	out.NodePools = append([]disruption.NodePool{}, in.NodePools...)
	r.Shuffle(len(out.NodePools), func(i, j int) { out.NodePools[i], out.NodePools[j] = out.NodePools[j], out.NodePools[i] })
	out.PendingPods = append([]*corev1.Pod{}, in.PendingPods...)
	r.Shuffle(len(out.PendingPods), func(i, j int) { out.PendingPods[i], out.PendingPods[j] = out.PendingPods[j], out.PendingPods[i] })
	out.PDBs = append(out.PDBs[:0:0], in.PDBs...)
	r.Shuffle(len(out.PDBs), func(i, j int) { out.PDBs[i], out.PDBs[j] = out.PDBs[j], out.PDBs[i] })
	out.InstanceTypes = append([]*scheduling.InstanceType{}, in.InstanceTypes...)
	r.Shuffle(len(out.InstanceTypes), func(i, j int) {
		out.InstanceTypes[i], out.InstanceTypes[j] = out.InstanceTypes[j], out.InstanceTypes[i]
	})
	return out
}
