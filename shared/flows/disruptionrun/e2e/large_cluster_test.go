package e2e

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/disruption"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// The generated large cluster: its node shapes, apps and pods (see BenchmarkDisruptionRunLargeCluster).

// benchShape is a node size of the generated cluster and how often it is drawn.
type benchShape struct {
	itype  string
	weight int
}

var benchShapes = []benchShape{
	{"m5.large", 20}, {"m5.xlarge", 25}, {"c5.xlarge", 15}, {"r5.large", 10},
	{"m5.2xlarge", 15}, {"c5.2xlarge", 10}, {"m5.4xlarge", 5},
}

// benchOversized is the instance type whose nodes are left mostly empty (oversized for their pods).
const benchOversized = "m5.4xlarge"

// generated is a cluster before it is created.
type generated struct {
	nodes   []*corev1.Node
	claims  []state.Claim
	pods    []*corev1.Pod
	before  int
	pinned  int
	guarded string // the app whose PodDisruptionBudget allows no disruption
}

// benchApp is a deployment of the generated cluster.
type benchApp struct {
	name   string
	cpu    resource.Quantity
	memory resource.Quantity
	// spread: its pods spread over zones (maxSkew 1), DoNotSchedule when hard, else ScheduleAnyway.
	spread, hard bool
}

// generateCluster packs n nodes of mixed sizes (every 20th oversized and mostly empty, a fifth
// on-demand, the rest spot, 1% annotated do-not-disrupt) with pods of benchApps deployments (a sixth of
// them spread over zones, one guarded by a PodDisruptionBudget), then removes 60% of the pods at
// random, leaving at least one pod on each node so the run has no empty node to take first and must
// search. The seed is fixed: the same n gives the same cluster.
func generateCluster(ns string, n int, catalog map[string]*scheduling.InstanceType) (*generated, error) {
	rng := rand.New(rand.NewPCG(benchSeed1, benchSeed2))
	cpus := []string{"100m", "150m", "200m", "250m", "300m", "350m"}
	mems := []string{"128Mi", "256Mi", "384Mi", "512Mi"}
	apps := make([]benchApp, benchApps)
	for i := range apps {
		apps[i] = benchApp{name: fmt.Sprintf("app-%02d", i), cpu: resource.MustParse(cpus[rng.IntN(len(cpus))]),
			memory: resource.MustParse(mems[rng.IntN(len(mems))]), spread: i%6 == 1, hard: i == 1}
	}
	g := &generated{guarded: apps[0].name}
	total := 0
	for _, s := range benchShapes {
		total += s.weight
	}
	suffix := ns[len(ns)-5:]
	launched := time.Now().Add(-2 * time.Hour)
	initialized := launched.Add(time.Minute)
	zoneCount := map[string]map[string]int{} // app → zone → pods, for the spread apps
	for _, a := range apps {
		zoneCount[a.name] = map[string]int{}
	}
	podsOf := make([][]*corev1.Pod, n)
	for i := range n {
		draw, shape := rng.IntN(total), benchShapes[0]
		for _, s := range benchShapes {
			if draw < s.weight {
				shape = s
				break
			}
			draw -= s.weight
		}
		it := catalog[shape.itype]
		if it == nil {
			return nil, fmt.Errorf("instance type %s is not in the catalog", shape.itype)
		}
		zone := benchZones[i%len(benchZones)]
		ct := instance.CapacityTypeSpot
		if rng.IntN(5) == 0 {
			ct = instance.CapacityTypeOnDemand
		}
		price := -1.0
		for _, o := range it.Offerings {
			if o.Zone == zone && o.CapacityType == ct {
				price = o.Price
			}
		}
		if price < 0 {
			return nil, fmt.Errorf("no %s %s offering in %s", ct, it.Name, zone)
		}
		name := fmt.Sprintf("bench-%04d-%s", i, suffix)
		providerID := fmt.Sprintf("aws:///%s/i-%017x", zone, 0xbe0000000+i)
		labels := map[string]string{"e2e": ns, corev1.LabelHostname: name, scheduling.LabelNodePool: "default",
			scheduling.LabelNodeInitalized: "true", "karpenter.sh/registered": "true", scheduling.LabelInstanceType: it.Name,
			scheduling.LabelZone: zone, scheduling.LabelCapacityType: ct, scheduling.LabelArch: "amd64",
			scheduling.LabelOS: "linux", apis.NodeClassLabelKey: "default"}
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: map[string]string{}},
			Spec: corev1.NodeSpec{ProviderID: providerID},
			Status: corev1.NodeStatus{Capacity: it.Capacity.List(), Allocatable: it.Allocatable.List(),
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
					LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.NewTime(initialized)}}}}
		if i%100 == 50 {
			node.Annotations[disruption.AnnotationDoNotDisrupt] = "true"
			g.pinned++
		}
		g.nodes = append(g.nodes, node)
		// The claim records its instance type's labels, as a launch does: without them the run would judge
		// requirement drift against the Node's labels, which lack instance-category.
		claimLabels := it.Requirements.Labels()
		maps.Copy(claimLabels, map[string]string{scheduling.LabelNodePool: "default", apis.NodeClassLabelKey: "default",
			scheduling.LabelInstanceType: it.Name, scheduling.LabelZone: zone, scheduling.LabelCapacityType: ct})
		g.claims = append(g.claims, state.Claim{Name: "claim-" + name, NodePool: "default", NodeClass: "default",
			Lifecycle: state.Initialized, InstanceType: it.Name, Zone: zone, CapacityType: ct, PricePerHour: price,
			ProviderID: providerID, NodeName: name, CreatedAt: launched, LaunchedAt: &launched, InitializedAt: &initialized,
			Labels: claimLabels})

		// Pack: draw pods of random apps until several in a row do not fit (an oversized node stops at
		// a third of its CPU).
		alloc := it.Allocatable.List()
		cpuLeft, memLeft, slots := alloc.Cpu().MilliValue(), alloc.Memory().Value(), alloc.Pods().Value()
		if it.Name == benchOversized {
			cpuLeft /= 3
		}
		for misses := 0; misses < 8 && slots > 0; {
			a := apps[rng.IntN(len(apps))]
			if a.cpu.MilliValue() > cpuLeft || a.memory.Value() > memLeft {
				misses++
				continue
			}
			if a.hard {
				counts := zoneCount[a.name]
				lowest := min(counts[benchZones[0]], counts[benchZones[1]])
				if counts[zone]+1-lowest > 1 {
					misses++
					continue
				}
			}
			cpuLeft -= a.cpu.MilliValue()
			memLeft -= a.memory.Value()
			slots--
			zoneCount[a.name][zone]++
			podsOf[i] = append(podsOf[i], benchPod(ns, a, name, len(podsOf[i])))
		}
	}
	// Remove 60% at random, keeping one pod per node.
	for i := range podsOf {
		g.before += len(podsOf[i])
		var kept []*corev1.Pod
		for _, p := range podsOf[i] {
			if rng.Float64() >= benchRemoved {
				kept = append(kept, p)
			}
		}
		if len(kept) == 0 && len(podsOf[i]) > 0 {
			kept = append(kept, podsOf[i][rng.IntN(len(podsOf[i]))])
		}
		g.pods = append(g.pods, kept...)
	}
	return g, nil
}

// benchPod is the j-th pod of app a on node, as a Deployment's pod looks once bound and running.
func benchPod(ns string, a benchApp, node string, j int) *corev1.Pod {
	controller := true
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%s-%d", a.name, strings.TrimPrefix(node, "bench-"), j), Namespace: ns,
			Labels: map[string]string{"app": a.name, "pod-template-hash": "7d9f8c6b5"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: a.name + "-7d9f8c6b5",
				UID: types.UID("00000000-0000-0000-0000-0000000000" + a.name[len(a.name)-2:]), Controller: &controller}}},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: a.cpu, corev1.ResourceMemory: a.memory}}}}},
	}
	if a.spread {
		when := corev1.ScheduleAnyway
		if a.hard {
			when = corev1.DoNotSchedule
		}
		p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone,
			WhenUnsatisfiable: when, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": a.name}}}}
	}
	return p
}

// createNode creates a Node as a kubelet leaves it: Ready, with capacity, and without the not-ready
// taint the API server adds at creation (no node-lifecycle controller runs here to remove it).
