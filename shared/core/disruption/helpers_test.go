package disruption_test

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/nodewright/nodewright/shared/core/disruption"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
)

// now is the time of every test snapshot: a Monday, 12:00 UTC.
var now = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

func dur(d time.Duration) *time.Duration { return &d }

// pool builds a NodePool consolidating after 0s with the default budget, options applied.
func pool(name string, opts ...func(*disruption.NodePool)) disruption.NodePool {
	p := disruption.NodePool{Scheduling: schedulingtest.NodePool(name), ConsolidateAfter: dur(0)}
	for _, o := range opts {
		o(&p)
	}
	return p
}

func budgets(b ...disruption.Budget) func(*disruption.NodePool) {
	return func(p *disruption.NodePool) { p.Budgets = b }
}

// unlimitedBudget lets every node of the pool go at once.
var unlimitedBudget = budgets(disruption.Budget{Nodes: "100%"})

func onDemandOnly(p *disruption.NodePool) {
	schedulingtest.Requirement(scheduling.LabelCapacityType, scheduling.OpIn, scheduling.CapacityTypeOnDemand)(&p.Scheduling)
}

func amd64Only(p *disruption.NodePool) {
	schedulingtest.Requirement(scheduling.LabelArch, scheduling.OpIn, "amd64")(&p.Scheduling)
}

func policy(pol disruption.Policy) func(*disruption.NodePool) {
	return func(p *disruption.NodePool) { p.Policy = pol }
}

func consolidateAfter(d *time.Duration) func(*disruption.NodePool) {
	return func(p *disruption.NodePool) { p.ConsolidateAfter = d }
}

// nodeSpec describes a node of a test cluster.
type nodeSpec struct {
	name, pool, itype, capacityType string
	pods                            []*corev1.Pod
}

// node builds an initialized, Ready node of an instance type of catalog in us-west-2a, priced at
// that offering, launched an hour before now. Its pods are bound to it.
func node(catalog []*scheduling.InstanceType, s nodeSpec) disruption.Node {
	var it *scheduling.InstanceType
	for _, t := range catalog {
		if t.Name == s.itype {
			it = t
		}
	}
	if it == nil {
		panic("no instance type " + s.itype)
	}
	zone := schedulingtest.Zones[0]
	price := 0.0
	for _, o := range it.Offerings {
		if o.Zone == zone && o.CapacityType == s.capacityType {
			price = o.Price
		}
	}
	labels := map[string]string{
		scheduling.LabelInstanceType: s.itype, scheduling.LabelZone: zone, scheduling.LabelCapacityType: s.capacityType,
		scheduling.LabelOS: "linux",
	}
	for k, v := range it.Requirements.Labels() {
		if k != scheduling.LabelZone && k != scheduling.LabelCapacityType {
			labels[k] = v
		}
	}
	if s.pool != "" {
		labels[scheduling.LabelNodePool] = s.pool
	}
	n := schedulingtest.Node(schedulingtest.NodeOptions{
		Name: s.name, Labels: labels,
		CPU: fmt.Sprintf("%dm", it.Allocatable.CPU), Memory: fmt.Sprintf("%d", it.Allocatable.Memory), Pods: it.Allocatable.Pods,
	})
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	for _, p := range s.pods {
		p.Spec.NodeName = s.name
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	}
	return disruption.Node{
		Node: n, Pods: s.pods, NodePool: s.pool, Claim: "claim-" + s.name, Initialized: true,
		InstanceType: s.itype, Zone: zone, CapacityType: s.capacityType, Price: price,
		LaunchedAt: now.Add(-time.Hour),
	}
}

// pod builds a running pod of a ReplicaSet (one per name) requesting cpu and 256Mi.
func pod(name, cpu string) *corev1.Pod {
	return schedulingtest.Pod(schedulingtest.PodOptions{Name: name, Owner: name, CPU: cpu, Memory: "256Mi", Labels: map[string]string{"app": name}})
}

func daemonPod(name string) *corev1.Pod {
	p := pod(name, "100m")
	yes := true
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "ds", UID: "ds", Controller: &yes}}
	return p
}

func mirrorPod(name string) *corev1.Pod {
	p := pod(name, "100m")
	p.OwnerReferences = nil
	p.Annotations = map[string]string{disruption.AnnotationMirrorPod: "x"}
	return p
}

func annotated(p *corev1.Pod, k, v string) *corev1.Pod {
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	p.Annotations[k] = v
	return p
}

// pdb builds a PodDisruptionBudget selecting app=app with the given disruptions allowed.
func pdb(name, app string, allowed int32) *policyv1.PodDisruptionBudget {
	one := intstr.FromInt32(1)
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}},
		Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed},
	}
}

// bigUnmanaged is a node Nodewright does not manage, with room for 60 CPUs of moved pods.
func bigUnmanaged(name string) disruption.Node {
	n := schedulingtest.Node(schedulingtest.NodeOptions{Name: name, CPU: "64", Memory: "256Gi", Pods: 500,
		Labels: map[string]string{scheduling.LabelArch: "amd64", scheduling.LabelOS: "linux", scheduling.LabelZone: schedulingtest.Zones[0]}})
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	return disruption.Node{Node: n, Initialized: true}
}

func nodeNames(c disruption.Command) []string {
	out := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		out[i] = n.Name
	}
	return out
}

func keptReason(r disruption.Result, node string) string {
	for _, k := range r.Kept {
		if k.Node == node {
			return k.Reason
		}
	}
	return ""
}
