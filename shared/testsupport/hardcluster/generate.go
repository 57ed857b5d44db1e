package hardcluster

import (
	"fmt"
	"math/rand/v2"
	"slices"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"

	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/flows/provisioning"
)

// openWindow is how many nodes stay open for first-fit at once (the nodes of the last scale-up
// batches); missesToClose is how many pods in a row a node may fail to take before it counts as full.
const (
	openWindow    = 12
	missesToClose = 8
)

// Cluster is a generated cluster.
type Cluster struct {
	// Nodes are every node; Pods the pods left on them (one DaemonSet pod per node included).
	Nodes []corev1.Node
	Pods  []corev1.Pod
	PDBs  []policyv1.PodDisruptionBudget
	// Catalog is the catalog the nodes were drawn from, written as instance-types.json.
	Catalog []provisioning.CatalogEntry
	Stats   Stats
}

// Stats describe a generated cluster.
type Stats struct {
	Nodes, Managed, Uninitialized, Oversized, Spot int
	// PodsPacked counts the deployments' pods packed before the scale-in, PodsLeft those left
	// (DaemonSet pods count in neither), PodsLeftOnPool those left on the NodePool's initialized nodes.
	PodsPacked, PodsLeft, PodsLeftOnPool int
	// PoolPricePerHour is what the NodePool's initialized nodes cost: the cost before consolidation.
	PoolPricePerHour float64
}

// deployment is one workload's pod shape and placement state.
type deployment struct {
	name     string
	cpu, mem int64
	// spread is the zone spread's WhenUnsatisfiable, or "" for none.
	spread corev1.UnsatisfiableConstraintAction
	placed int
}

// node is a node while pods are packed.
type node struct {
	index                  int
	entry                  *provisioning.CatalogEntry
	zone, capacityType     string
	managed, uninitialized bool
	oversized              bool
	free                   scheduling.Resources
	misses                 int
	pods                   []corev1.Pod
}

func (n *node) fits(d *deployment) bool {
	return n.free.CPU >= d.cpu && n.free.Memory >= d.mem && n.free.Pods >= 1
}

func (n *node) take(cpu, mem int64) {
	n.free.CPU -= cpu
	n.free.Memory -= mem
	n.free.Pods--
}

// generator packs one cluster.
type generator struct {
	cfg                 Config
	r                   *rand.Rand
	ordinary, oversized typePool
	deployments         []deployment
	nodes               []*node
	open                []*node
	poolNodes           int
	podID               int
	stats               Stats
}

// Generate builds the cluster cfg describes from catalog (see the package doc).
func Generate(cfg Config, catalog []provisioning.CatalogEntry) (*Cluster, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	ordinary, oversized, err := newTypePools(catalog)
	if err != nil {
		return nil, err
	}
	g := &generator{cfg: cfg, r: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x4a7dc1)), ordinary: ordinary, oversized: oversized}
	g.deployments = newDeployments(g.r, cfg.Deployments, cfg.SpreadShare)
	if err := g.pack(); err != nil {
		return nil, err
	}
	return g.cluster(catalog), nil
}

// newDeployments draws n pod shapes: mostly small CPU requests, 1 to 8 GiB of memory per vCPU;
// share of them spread over zones.
func newDeployments(r *rand.Rand, n int, share float64) []deployment {
	cpus := []int64{100, 100, 150, 200, 200, 250, 300, 400, 500, 750, 1000}
	perCPU := []int64{1, 2, 2, 4, 4, 8}
	spreads := int(float64(n)*share + 0.5)
	out := make([]deployment, n)
	for i := range out {
		cpu := cpus[r.IntN(len(cpus))]
		mem := cpu * perCPU[r.IntN(len(perCPU))] << 30 / 1000
		mem = mem * int64(75+r.IntN(51)) / 100 >> 20 << 20
		d := deployment{name: fmt.Sprintf("app-%03d", i), cpu: cpu, mem: max(mem, 64<<20)}
		if i < spreads {
			d.spread = []corev1.UnsatisfiableConstraintAction{corev1.DoNotSchedule, corev1.ScheduleAnyway}[i%2]
		}
		out[i] = d
	}
	return out
}

// zones are the zones nodes run in.
var zones = []string{"us-east-1a", "us-east-1b", "us-east-1c"}

// pack streams pods of random deployments first-fit onto the open nodes (a spread deployment's pods
// round-robin over the zones), opening a node when none fits, until a pod finds no room and the
// cluster already has cfg.Nodes nodes.
func (g *generator) pack() error {
	for {
		d := &g.deployments[g.r.IntN(len(g.deployments))]
		zone := ""
		if d.spread != "" {
			zone = zones[d.placed%len(zones)]
		}
		n := g.firstFit(d, zone)
		if n == nil {
			if len(g.nodes) == g.cfg.Nodes {
				return nil
			}
			var err error
			if n, err = g.openNode(zone); err != nil {
				return err
			}
			if !n.fits(d) {
				return fmt.Errorf("deployment %s (%dm, %dMi) fits no new %s node", d.name, d.cpu, d.mem>>20, n.entry.Name)
			}
		}
		g.place(n, d)
	}
}

// firstFit is the first open node in zone (any zone when empty) with room for one of d's pods,
// closing the open nodes that missed too many pods in a row.
func (g *generator) firstFit(d *deployment, zone string) *node {
	var found *node
	kept := g.open[:0]
	for _, n := range g.open {
		if found == nil && (zone == "" || n.zone == zone) {
			if n.fits(d) {
				found = n
				n.misses = 0
			} else if n.misses++; n.misses >= missesToClose {
				continue
			}
		}
		kept = append(kept, n)
	}
	g.open = kept
	return found
}

// place packs one pod of d onto n; the pod is deleted by the scale-in with probability cfg.Removed.
func (g *generator) place(n *node, d *deployment) {
	n.take(d.cpu, d.mem)
	d.placed++
	g.podID++
	g.stats.PodsPacked++
	if g.r.Float64() < g.cfg.Removed {
		return
	}
	n.pods = append(n.pods, newPod(fmt.Sprintf("%s-%07d", d.name, g.podID), d.name, n, d.cpu, d.mem, d.spread))
}

// openNode adds a node in zone (a random one when empty): managed, oversized or an ordinary node of
// the NodePool (spot with SpotShare), one in UninitializedShare of the NodePool's nodes never
// initialized. Every node runs the DaemonSet's pod; the guarded deployment's pods go to evenly spaced
// ordinary NodePool nodes.
func (g *generator) openNode(zone string) (*node, error) {
	n := &node{index: len(g.nodes), capacityType: scheduling.CapacityTypeOnDemand}
	pool := &g.ordinary
	switch k := g.r.Float64(); {
	case k < g.cfg.ManagedShare:
		n.managed = true
	case k < g.cfg.ManagedShare+g.cfg.OversizedShare:
		n.oversized = true
		pool = &g.oversized
	default:
		if g.r.Float64() < g.cfg.SpotShare {
			n.capacityType = scheduling.CapacityTypeSpot
		}
	}
	if !n.managed {
		n.uninitialized = g.r.Float64() < g.cfg.UninitializedShare
	}
	if n.entry, n.zone = pool.draw(g.r, n.capacityType, zone); n.entry == nil {
		return nil, fmt.Errorf("the catalog has no %s type offered %s in zone %q", n.capacityType, map[bool]string{true: "oversized", false: "ordinary"}[n.oversized], zone)
	}
	n.free = n.entry.Allocatable.Resources()
	if n.oversized {
		n.free.CPU, n.free.Memory = n.free.CPU/2, n.free.Memory/2
	}
	n.take(daemonCPU, daemonMem)
	n.pods = append(n.pods, newDaemonPod(n))
	if g.guarded(n) {
		n.take(guardedCPU, guardedMem)
		n.pods = append(n.pods, newGuardedPod(n))
		g.stats.PodsPacked++
	}
	if !n.managed {
		g.poolNodes++
	}
	g.nodes = append(g.nodes, n)
	g.open = append(g.open, n)
	if len(g.open) > openWindow {
		g.open = slices.Delete(g.open, 0, 1)
	}
	return n, nil
}

// guarded reports whether ordinary NodePool node n runs a pod of the guarded deployment: every
// Nodes/GuardedNodes-th node of the pool, from the middle of the first stride.
func (g *generator) guarded(n *node) bool {
	if g.cfg.GuardedNodes == 0 || n.managed || n.oversized || n.uninitialized {
		return false
	}
	stride := max(1, g.cfg.Nodes/g.cfg.GuardedNodes)
	return g.poolNodes%stride == stride/2 && g.poolNodes/stride < g.cfg.GuardedNodes
}

// cluster turns the packed nodes into objects.
func (g *generator) cluster(catalog []provisioning.CatalogEntry) *Cluster {
	c := &Cluster{Catalog: catalog, PDBs: []policyv1.PodDisruptionBudget{guardedPDB(g.cfg.GuardedNodes)}}
	s := g.stats
	s.Nodes = len(g.nodes)
	for _, n := range g.nodes {
		c.Nodes = append(c.Nodes, newNode(n))
		c.Pods = append(c.Pods, n.pods...)
		left := len(n.pods) - 1 // the DaemonSet pod
		s.PodsLeft += left
		switch {
		case n.managed:
			s.Managed++
		case n.uninitialized:
			s.Uninitialized++
		default:
			s.PodsLeftOnPool += left
			s.PoolPricePerHour += priceOf(n.entry, n.capacityType, n.zone)
		}
		if n.oversized {
			s.Oversized++
		}
		if n.capacityType == scheduling.CapacityTypeSpot {
			s.Spot++
		}
	}
	c.Stats = s
	return c
}
