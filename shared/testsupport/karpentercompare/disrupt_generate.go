package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/testsupport/hardcluster"
)

// podShape is a deployment's pod requests.
type podShape struct{ cpu, mem int64 }

var fragmentedShapes = []podShape{
	{250, 512 << 20}, {500, 1 << 30}, {1000, 2 << 30}, {200, 256 << 20}, {1500, 3 << 30}, {750, 4 << 30},
	{100, 128 << 20}, {2000, 1 << 30}, {300, 3 << 30}, {600, 600 << 20}, {1200, 1 << 30}, {400, 2 << 30},
}

// generateFragmented writes a fragmented cluster of n nodes into dir (hardcluster.NodePools is its
// NodePool), the way a cluster looks after a scale-in: nodes of random catalog types (three
// quarters spot; every tenth one of the largest types, filled only half), pods packed first-fit
// onto them (at most 30 a node), then 60% of the pods deleted. Every third deployment spreads over
// zones (ScheduleAnyway), one pod on every twentieth node is under a PDB allowing no disruption,
// every 25th node belongs to a managed node group (no NodePool label) and every 40th has not
// initialized. The catalog and DaemonSets are the plan --disrupt scenarios' (testdata, which holds
// the one DaemonSet of 100m / 128Mi).
func generateFragmented(dir, testdata string, n int, seed uint64) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, name := range []string{"instance-types.json", "daemonsets.yaml"} {
		data, err := os.ReadFile(filepath.Join(testdata, name))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "nodepools.yaml"), []byte(hardcluster.NodePools), 0o644); err != nil {
		return err
	}
	catalogs, _, err := poolCatalogs(disruptFiles{NodePools: filepath.Join(dir, "nodepools.yaml"), Catalog: filepath.Join(dir, "instance-types.json")})
	if err != nil {
		return err
	}
	catalog := catalogs["default"]
	largest := slices.Clone(catalog)
	slices.SortFunc(largest, func(a, b *scheduling.InstanceType) int { return int(b.Allocatable.CPU - a.Allocatable.CPU) })
	largest = largest[:max(1, len(largest)/4)]
	r := rand.New(rand.NewPCG(seed, 0))
	nodes := corev1.NodeList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "NodeList"}}
	pods := corev1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"}}
	const dsCPU, dsMem = 100, 128 << 20
	podID := 0
	for i := range n {
		name := fmt.Sprintf("node-%05d", i)
		oversized := i%10 == 9
		it := catalog[r.IntN(len(catalog))]
		if oversized {
			it = largest[r.IntN(len(largest))]
		}
		ct := karpv1.CapacityTypeSpot
		if r.IntN(4) == 0 {
			ct = karpv1.CapacityTypeOnDemand
		}
		var zones []string
		for _, o := range it.Offerings {
			if o.CapacityType == ct && o.Available {
				zones = append(zones, o.Zone)
			}
		}
		labels := map[string]string{}
		for _, key := range it.Requirements.Keys() {
			if req := it.Requirements.Get(key); req.Operator() == scheduling.OpIn && len(req.Values()) == 1 {
				labels[key] = req.Values()[0]
			}
		}
		labels[corev1.LabelInstanceTypeStable] = it.Name
		labels[corev1.LabelTopologyZone] = zones[r.IntN(len(zones))]
		labels[karpv1.CapacityTypeLabelKey] = ct
		labels[corev1.LabelHostname] = name
		switch {
		case i%25 == 24:
			labels[karpv1.CapacityTypeLabelKey] = karpv1.CapacityTypeOnDemand // a managed node group's
		case i%40 == 39:
			labels[karpv1.NodePoolLabelKey] = "default" // launched, not initialized
			labels[karpv1.NodeRegisteredLabelKey] = "true"
		default:
			labels[karpv1.NodePoolLabelKey] = "default"
			labels[karpv1.NodeRegisteredLabelKey] = "true"
			labels[karpv1.NodeInitializedLabelKey] = "true"
		}
		node := corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			Spec:       corev1.NodeSpec{ProviderID: "aws:///" + labels[corev1.LabelTopologyZone] + "/i-" + name},
			Status: corev1.NodeStatus{
				Capacity: it.Capacity.List(), Allocatable: it.Allocatable.List(),
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			},
		}
		nodes.Items = append(nodes.Items, node)
		pods.Items = append(pods.Items, fragmentedPod("kube-system", "node-agent-"+name, name, "node-agent", "DaemonSet", podShape{dsCPU, dsMem}, false))
		free := podShape{it.Allocatable.CPU - dsCPU, it.Allocatable.Memory - dsMem}
		if oversized {
			free = podShape{free.cpu / 2, free.mem / 2}
		}
		if i%20 == 0 {
			pods.Items = append(pods.Items, fragmentedPod("default", fmt.Sprintf("guarded-%05d", i), name, "guarded", "ReplicaSet", podShape{200, 256 << 20}, false))
			free = podShape{free.cpu - 200, free.mem - 256<<20}
		}
		placed := 0
		for try := 0; try < 120 && placed < 30; try++ {
			k := r.IntN(len(fragmentedShapes))
			s := fragmentedShapes[k]
			if s.cpu > free.cpu || s.mem > free.mem {
				continue
			}
			free = podShape{free.cpu - s.cpu, free.mem - s.mem}
			placed++
			podID++
			if r.Float64() < 0.6 {
				continue // deleted by the scale-in
			}
			app := fmt.Sprintf("app-%02d", k)
			pods.Items = append(pods.Items, fragmentedPod("default", fmt.Sprintf("%s-%06d", app, podID), name, app, "ReplicaSet", s, k%3 == 0))
		}
	}
	zero := intstr.FromInt32(0)
	pdbs := policyv1.PodDisruptionBudgetList{TypeMeta: metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudgetList"},
		Items: []policyv1.PodDisruptionBudget{{
			ObjectMeta: metav1.ObjectMeta{Name: "guarded", Namespace: "default"},
			Spec:       policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &zero, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "guarded"}}},
			Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 0},
		}}}
	for name, v := range map[string]any{"nodes.json": nodes, "pods.json": pods, "pdbs.json": pdbs} {
		data, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func fragmentedPod(ns, name, node, app, ownerKind string, s podShape, spread bool) corev1.Pod {
	yes := true
	p := corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": app},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: ownerKind, Name: app, UID: types.UID("uid-" + app), Controller: &yes}}},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "main", Image: "registry.example/app:1",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU:    *resource.NewMilliQuantity(s.cpu, resource.DecimalSI),
				corev1.ResourceMemory: *resource.NewQuantity(s.mem, resource.BinarySI),
			}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
	}
	if ownerKind == "DaemonSet" {
		p.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
	}
	if spread {
		p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
			MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone, WhenUnsatisfiable: corev1.ScheduleAnyway,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
		}}
	}
	return p
}
