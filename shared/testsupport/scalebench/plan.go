package scalebench

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// Zones are the availability zones the generated nodes spread over (the sandbox VPC's subnets).
var Zones = []string{"us-east-1a", "us-east-1b", "us-east-1c"}

// zoneIDs are the zone ids EKS labels Nodes with (topology.k8s.aws/zone-id).
var zoneIDs = map[string]string{"us-east-1a": "use1-az4", "us-east-1b": "use1-az6", "us-east-1c": "use1-az1"}

// Generator sizing.
const (
	namespaceCount = 200
	// daemonSets run a pod on every Node (aws-node, kube-proxy, ebs-csi-node).
	daemonSetCount = 3
	// TerminationNodePods is how many pods the termination scenario's node holds.
	TerminationNodePods = 110
	// utilization is the share of a node's allocatable CPU and memory the placement fills at most.
	utilization = 0.85
)

// Plan is a generated cluster: who runs where, and with what. Objects are rendered from it on demand
// (Node, Pod), each from its own seeded source, so they can be written in parallel and regenerated.
type Plan struct {
	Seed uint64
	Tier Tier
	// Now is the instant the objects' timestamps are relative to.
	Now        time.Time
	Namespaces []string
	DaemonSets []Workload
	Workloads  []Workload
	Nodes      []NodePlan
	// Pods are the bound pods: the DaemonSets' on every node, then the workloads'.
	Pods []PodPlan
}

// NodePlan is one node (and its claim and instance).
type NodePlan struct {
	Index        int
	Shape        shape
	Zone         string
	CapacityType string
	NodePool     string
	// Claim is the claim's name, as the provisioner names it (<nodepool>-<5 characters>).
	Claim string
	// Age is how long before Plan.Now the node joined.
	Age time.Duration
	// requests already placed (millicores, MiB) and pods, while planning.
	cpu, mem int64
	pods     int
}

// Workload is a ReplicaSet, StatefulSet or DaemonSet: its pods share a template.
type Workload struct {
	Index              int
	Namespace, Name    string
	Kind               string // ReplicaSet, StatefulSet, DaemonSet
	Replicas           int
	MilliCPU, MemMiB   int64
	Sidecars           int  // 0–2 containers beside the main one
	PDB                bool // a PodDisruptionBudget selects its pods
	Volume             bool // StatefulSet: a PVC per pod
	TemplateHash, UID  string
	DoNotDisrupt       bool
	PriorityClassName  string
	TopologySpread     bool
	ServiceAccountName string
	// Burst: no replicas are placed; the provisioner scenario's pending pods are its.
	Burst bool
}

// PodPlan is one pod: its workload, its ordinal within it, and its node (-1: pending).
type PodPlan struct {
	Workload  int
	DaemonSet bool
	Ordinal   int
	Node      int
}

// NewPlan generates the cluster of tier from seed. Node 0 is the termination scenario's large node
// holding TerminationNodePods pods; every node runs one pod of each DaemonSet.
func NewPlan(seed uint64, tier Tier, now time.Time) (*Plan, error) {
	if tier.Nodes < 2 || tier.Pods < tier.Nodes*(daemonSetCount+1) {
		return nil, fmt.Errorf("tier %s: too small to plan", tier)
	}
	r := rand.New(rand.NewPCG(seed, 0x5ca1eb))
	p := &Plan{Seed: seed, Tier: tier, Now: now}
	for i := 0; i < namespaceCount; i++ {
		p.Namespaces = append(p.Namespaces, fmt.Sprintf("%s-%s", teams[i%len(teams)], apps[(i/len(teams))%len(apps)]))
		if i >= len(teams)*len(apps) {
			p.Namespaces[i] += fmt.Sprintf("-%d", i/(len(teams)*len(apps)))
		}
	}
	p.planNodes(r)
	for i, name := range []string{"aws-node", "kube-proxy", "ebs-csi-node"} {
		p.DaemonSets = append(p.DaemonSets, Workload{Index: i, Namespace: "kube-system", Name: name, Kind: "DaemonSet",
			Replicas: tier.Nodes, MilliCPU: []int64{25, 100, 10}[i], MemMiB: []int64{64, 128, 40}[i], Sidecars: []int{1, 0, 2}[i],
			TemplateHash: randomString(r, 10), UID: uid(r), PriorityClassName: "system-node-critical", ServiceAccountName: name})
	}
	for n := range p.Nodes {
		for d := range p.DaemonSets {
			p.Pods = append(p.Pods, PodPlan{Workload: d, DaemonSet: true, Ordinal: n, Node: n})
			p.Nodes[n].cpu += p.DaemonSets[d].MilliCPU
			p.Nodes[n].mem += p.DaemonSets[d].MemMiB
			p.Nodes[n].pods++
		}
	}
	want := tier.Pods - len(p.Pods)
	p.planWorkloads(r, want)
	if err := p.place(r); err != nil {
		return nil, err
	}
	p.planBurst(r)
	return p, nil
}

// burstWorkloads are the Deployments whose scale-up leaves the provisioner scenario's pods pending.
const burstWorkloads = 3

// planBurst adds burstWorkloads Deployments with no replicas yet, each pod asking for more CPU than any
// node has left (placement leaves at most 15% of a node free), as a batch or ML job scaled up at once:
// kube-scheduler finds no room for them and the provisioner has to launch.
func (p *Plan) planBurst(r *rand.Rand) {
	for i := 0; i < burstWorkloads; i++ {
		w := Workload{Index: len(p.Workloads), Namespace: p.Namespaces[r.IntN(len(p.Namespaces))], Kind: "ReplicaSet",
			MilliCPU: 5000 + 500*int64(i), MemMiB: 6144, TemplateHash: randomString(r, 10), UID: uid(r), ServiceAccountName: "default", Burst: true}
		w.Name = fmt.Sprintf("%s-%d", []string{"batch-trainer", "report-builder", "index-rebuild"}[i], w.Index)
		p.Workloads = append(p.Workloads, w)
	}
}

// planNodes draws the nodes' types, zones, capacity types and NodePools; node 0 is the big one.
func (p *Plan) planNodes(r *rand.Rand) {
	taken := map[string]bool{}
	total := 0
	for _, s := range shapes {
		total += s.Weight
	}
	for i := 0; i < p.Tier.Nodes; i++ {
		s := bigShape
		if i > 0 {
			k := r.IntN(total)
			for _, c := range shapes {
				if k < c.Weight {
					s = c
					break
				}
				k -= c.Weight
			}
		}
		pool, capacity := "general", "on-demand"
		switch x := r.IntN(10); {
		case i == 0:
		case x < 4:
			pool, capacity = "spot", "spot"
		case x < 5:
			pool = "system"
		}
		zone := Zones[r.IntN(len(Zones))]
		claim := pool + "-" + randomString(r, 5)
		for taken[claim] { // a claim name is the claim's key: draw again, as the provisioner would
			claim = pool + "-" + randomString(r, 5)
		}
		taken[claim] = true
		p.Nodes = append(p.Nodes, NodePlan{Index: i, Shape: s, Zone: zone, CapacityType: capacity,
			NodePool: pool, Claim: claim, Age: time.Duration(1+r.IntN(14*24*60)) * time.Minute})
	}
}

// planWorkloads draws workloads until they have want pods: most are small Deployments, some large, a
// tenth StatefulSets with a volume per pod.
func (p *Plan) planWorkloads(r *rand.Rand, want int) {
	for have := 0; have < want; {
		ns := p.Namespaces[r.IntN(len(p.Namespaces))]
		var replicas int
		switch x := r.IntN(100); {
		case x < 60:
			replicas = 2 + r.IntN(4)
		case x < 90:
			replicas = 6 + r.IntN(25)
		default:
			replicas = 40 + r.IntN(160)
		}
		replicas = min(replicas, want-have)
		kind := "ReplicaSet"
		if r.IntN(10) == 0 {
			kind = "StatefulSet"
		}
		w := Workload{Index: len(p.Workloads), Namespace: ns, Name: fmt.Sprintf("%s-%s", apps[r.IntN(len(apps))], components[r.IntN(len(components))]),
			Kind: kind, Replicas: replicas, MilliCPU: 100 + 10*int64(r.IntN(31)), MemMiB: 64 + 16*int64(r.IntN(26)), Sidecars: sidecars(r),
			PDB: r.IntN(10) < 6, Volume: kind == "StatefulSet", TemplateHash: randomString(r, 10), UID: uid(r),
			DoNotDisrupt: r.IntN(100) == 0, TopologySpread: r.IntN(4) == 0, ServiceAccountName: "default"}
		w.Name = fmt.Sprintf("%s-%d", w.Name, w.Index)
		if r.IntN(5) == 0 {
			w.PriorityClassName = "high-priority"
		}
		p.Workloads = append(p.Workloads, w)
		have += replicas
	}
}

// sidecars draws how many containers run beside a workload's main one: none for most.
func sidecars(r *rand.Rand) int {
	switch x := r.IntN(20); {
	case x < 14:
		return 0
	case x < 19:
		return 1
	}
	return 2
}

// place puts every workload pod on a node with room (CPU, memory, max pods, at most utilization of
// allocatable): node 0 first until it holds TerminationNodePods pods, then nodes drawn at random.
func (p *Plan) place(r *rand.Rand) error {
	var pods []PodPlan
	for _, w := range p.Workloads {
		for o := 0; o < w.Replicas; o++ {
			pods = append(pods, PodPlan{Workload: w.Index, Ordinal: o, Node: -1})
		}
	}
	r.Shuffle(len(pods), func(i, j int) { pods[i], pods[j] = pods[j], pods[i] })
	fits := func(n *NodePlan, w Workload) bool {
		return n.pods < n.Shape.MaxPods() && n.pods < TerminationNodePods &&
			float64(n.cpu+w.MilliCPU) <= utilization*float64(n.Shape.allocatableMilliCPU()) &&
			float64(n.mem+w.MemMiB) <= utilization*float64(n.Shape.allocatableMemoryMiB())
	}
	cursor := 1
	for i := range pods {
		w := p.Workloads[pods[i].Workload]
		node := -1
		if p.Nodes[0].pods < TerminationNodePods && fits(&p.Nodes[0], w) {
			node = 0
		}
		for try := 0; node < 0 && try < 8; try++ {
			if k := 1 + r.IntN(len(p.Nodes)-1); fits(&p.Nodes[k], w) {
				node = k
			}
		}
		for scanned := 0; node < 0 && scanned < len(p.Nodes); scanned++ {
			if fits(&p.Nodes[cursor], w) {
				node = cursor
			}
			cursor = 1 + cursor%(len(p.Nodes)-1)
		}
		if node < 0 {
			return fmt.Errorf("tier %s: pod %d of %s fits no node", p.Tier, pods[i].Ordinal, w.Name)
		}
		pods[i].Node = node
		n := &p.Nodes[node]
		n.cpu += w.MilliCPU
		n.mem += w.MemMiB
		n.pods++
	}
	p.Pods = append(p.Pods, pods...)
	return nil
}

// PendingPods are n pods of the burst workloads, unbound and marked Unschedulable, as their scale-up
// leaves them: the provisioner scenario's 1%.
func (p *Plan) PendingPods(n int) []PodPlan {
	var burst []int
	for _, w := range p.Workloads {
		if w.Burst {
			burst = append(burst, w.Index)
		}
	}
	out := make([]PodPlan, n)
	for i := range out {
		out[i] = PodPlan{Workload: burst[i%len(burst)], Ordinal: i / len(burst), Node: -1}
	}
	return out
}

// PodsOn returns the indexes (into Pods) of the pods planned on node n.
func (p *Plan) PodsOn(n int) []int {
	var out []int
	for i, pp := range p.Pods {
		if pp.Node == n {
			out = append(out, i)
		}
	}
	return out
}

var (
	teams      = []string{"payments", "search", "checkout", "identity", "catalog", "ads", "ml", "platform", "data", "growth"}
	apps       = []string{"api", "web", "worker", "gateway", "indexer", "scheduler", "cache", "stream", "batch", "auth", "billing", "ledger", "feed", "notify", "report", "sync", "media", "geo", "risk", "pricing"}
	components = []string{"server", "consumer", "frontend", "backend", "processor", "proxy", "cron", "listener"}
)

const alnum = "bcdfghjklmnpqrstvwxz2456789"

// randomString draws n characters as Kubernetes' generated names use them.
func randomString(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alnum[r.IntN(len(alnum))]
	}
	return string(b)
}

// uid draws a UUID-shaped object uid.
func uid(r *rand.Rand) string {
	const hex = "0123456789abcdef"
	b := make([]byte, 36)
	for i := range b {
		switch i {
		case 8, 13, 18, 23:
			b[i] = '-'
		default:
			b[i] = hex[r.IntN(16)]
		}
	}
	return string(b)
}
