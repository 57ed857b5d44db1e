package main

import (
	"context"
	"fmt"
	"sync"

	"github.com/awslabs/operatorpkg/object"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/test/v1alpha1"
)

// loadParallelism is how many API calls the loader makes at once.
const loadParallelism = 16

// testNodeClassRef is the node class Karpenter's fake cloud provider manages: every NodePool and
// NodeClaim refers to it instead of an EC2NodeClass, so that Karpenter treats them as its own.
func testNodeClassRef(name string) *karpv1.NodeClassReference {
	gvk := object.GVK(&v1alpha1.TestNodeClass{})
	return &karpv1.NodeClassReference{Group: gvk.Group, Kind: gvk.Kind, Name: name}
}

// loadCluster writes the case into the API server as a running cluster looks: namespaces, the
// NodePools (ready, scheduled budgets always active), DaemonSets, Nodes, a NodeClaim for each node of
// a NodePool (launched and registered; when the node is initialized, initialized and consolidatable
// too: the files hold no pod history, so consolidateAfter has passed, as the dry run assumes), the
// bound pods (running) and the PDBs with their status as given. Nodes without a NodePool (managed
// node groups) get no NodeClaim: Karpenter never disrupts them.
func loadCluster(ctx context.Context, kube client.Client, c *disruptCase) error {
	namespaces := map[string]bool{}
	for _, p := range c.Pods {
		namespaces[p.Namespace] = true
	}
	for _, p := range c.PDBs {
		namespaces[p.Namespace] = true
	}
	for _, d := range c.DaemonSets {
		namespaces[d.Namespace] = true
	}
	for ns := range namespaces {
		if ns == "" {
			continue
		}
		if err := kube.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("namespace %s: %w", ns, err)
		}
	}
	for _, p := range c.Pools {
		np := p.DeepCopy()
		np.ResourceVersion = ""
		np.Spec.Template.Spec.NodeClassRef = testNodeClassRef(np.Spec.Template.Spec.NodeClassRef.Name)
		alwaysActiveBudgets(np)
		if err := kube.Create(ctx, np); err != nil {
			return fmt.Errorf("NodePool %s: %w", p.Name, err)
		}
		np.StatusConditions().SetTrue(karpv1.ConditionTypeValidationSucceeded)
		np.StatusConditions().SetTrue(karpv1.ConditionTypeNodeClassReady)
		np.StatusConditions().SetTrue(karpv1.ConditionTypeNodeRegistrationHealthy)
		if err := kube.Status().Update(ctx, np); err != nil {
			return fmt.Errorf("NodePool %s status: %w", p.Name, err)
		}
	}
	for _, d := range c.DaemonSets {
		ds := d.DeepCopy()
		ds.ResourceVersion = ""
		if ds.Namespace == "" {
			ds.Namespace = metav1.NamespaceDefault
		}
		if err := kube.Create(ctx, ds); err != nil {
			return fmt.Errorf("DaemonSet %s/%s: %w", ds.Namespace, ds.Name, err)
		}
	}
	if err := parallel(ctx, len(c.Nodes), func(i int) error { return loadNode(ctx, kube, c, c.Nodes[i]) }); err != nil {
		return err
	}
	if err := parallel(ctx, len(c.Pods), func(i int) error {
		p := c.Pods[i]
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed || p.DeletionTimestamp != nil {
			return nil // plan --disrupt ignores finished pods
		}
		return createPod(ctx, kube, p, p.Spec.NodeName)
	}); err != nil {
		return err
	}
	for _, p := range c.PDBs {
		pdb := p.DeepCopy()
		pdb.ResourceVersion = ""
		if err := kube.Create(ctx, pdb); err != nil {
			return fmt.Errorf("PDB %s/%s: %w", p.Namespace, p.Name, err)
		}
		pdb.Status = p.Status
		if err := kube.Status().Update(ctx, pdb); err != nil {
			return fmt.Errorf("PDB %s/%s status: %w", p.Namespace, p.Name, err)
		}
	}
	return nil
}

// alwaysActiveBudgets drops the schedules of a NodePool's budgets: plan --disrupt treats scheduled
// budgets as always active (so that its answer holds at any hour), and a budget without a schedule
// is always active for Karpenter too.
func alwaysActiveBudgets(np *karpv1.NodePool) {
	for i := range np.Spec.Disruption.Budgets {
		np.Spec.Disruption.Budgets[i].Schedule = nil
		np.Spec.Disruption.Budgets[i].Duration = nil
	}
}

// loadNode creates a node with its status and, for a node of ours, its NodeClaim.
func loadNode(ctx context.Context, kube client.Client, c *disruptCase, in *corev1.Node) error {
	n := in.DeepCopy()
	n.ResourceVersion = ""
	if n.Spec.ProviderID == "" {
		n.Spec.ProviderID = "nodewright:///" + n.Name
	}
	status := n.Status
	if err := kube.Create(ctx, n); err != nil {
		return fmt.Errorf("node %s: %w", n.Name, err)
	}
	if err := readyNode(ctx, kube, n, in.Spec.Taints, status); err != nil {
		return err
	}
	if !c.poolNode(n) {
		return nil
	}
	return createNodeClaim(ctx, kube, n, nodeClaimFor(c, n), n.Labels[karpv1.NodeInitializedLabelKey] == "true")
}

// readyNode gives a created node its status and its own taints: the API server's admission adds
// node.kubernetes.io/not-ready on create, which the node lifecycle controller (not running here)
// removes once the node is Ready.
func readyNode(ctx context.Context, kube client.Client, n *corev1.Node, taints []corev1.Taint, status corev1.NodeStatus) error {
	n.Status = status
	if err := kube.Status().Update(ctx, n); err != nil {
		return fmt.Errorf("node %s status: %w", n.Name, err)
	}
	n.Spec.Taints = taints
	if err := kube.Update(ctx, n); err != nil {
		return fmt.Errorf("node %s taints: %w", n.Name, err)
	}
	return nil
}

// nodeClaimFor is the NodeClaim Karpenter would hold for a node of ours: the node's labels, its
// pool's taints and node class, requirements pinning its instance type, zone and capacity type.
func nodeClaimFor(c *disruptCase, n *corev1.Node) *karpv1.NodeClaim {
	pool := n.Labels[karpv1.NodePoolLabelKey]
	nc := &karpv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: map[string]string{}}}
	for k, v := range n.Labels {
		nc.Labels[k] = v
	}
	for _, p := range c.Pools {
		if p.Name == pool {
			nc.Spec.NodeClassRef = testNodeClassRef(p.Spec.Template.Spec.NodeClassRef.Name)
			nc.Spec.Taints = p.Spec.Template.Spec.Taints
		}
	}
	for _, key := range []string{corev1.LabelInstanceTypeStable, corev1.LabelTopologyZone, karpv1.CapacityTypeLabelKey} {
		if v := n.Labels[key]; v != "" {
			nc.Spec.Requirements = append(nc.Spec.Requirements, karpv1.NodeSelectorRequirementWithMinValues{
				NodeSelectorRequirement: corev1.NodeSelectorRequirement{Key: key, Operator: corev1.NodeSelectorOpIn, Values: []string{v}},
			})
		}
	}
	return nc
}

// createNodeClaim creates nc for node n with the status of a launched claim whose node registered
// and, when initialized, initialized (and is consolidatable). A claim not initialized keeps its node
// out of Karpenter's candidates, and a simulation that places pods on it fails, as in a cluster.
func createNodeClaim(ctx context.Context, kube client.Client, n *corev1.Node, nc *karpv1.NodeClaim, initialized bool) error {
	if err := kube.Create(ctx, nc); err != nil {
		return fmt.Errorf("NodeClaim %s: %w", nc.Name, err)
	}
	nc.Status.ProviderID = n.Spec.ProviderID
	nc.Status.NodeName = n.Name
	nc.Status.Capacity = n.Status.Capacity
	nc.Status.Allocatable = n.Status.Allocatable
	conditions := []string{karpv1.ConditionTypeLaunched, karpv1.ConditionTypeRegistered}
	if initialized {
		conditions = append(conditions, karpv1.ConditionTypeInitialized, karpv1.ConditionTypeConsolidatable)
	}
	for _, cond := range conditions {
		nc.StatusConditions().SetTrue(cond)
	}
	if err := kube.Status().Update(ctx, nc); err != nil {
		return fmt.Errorf("NodeClaim %s status: %w", nc.Name, err)
	}
	return nil
}

// createPod creates a copy of p bound to node ("" leaves it pending), then gives it p's status.
func createPod(ctx context.Context, kube client.Client, p *corev1.Pod, node string) error {
	pod := p.DeepCopy()
	pod.ResourceVersion, pod.UID, pod.CreationTimestamp, pod.ManagedFields = "", "", metav1.Time{}, nil
	pod.Spec.NodeName = node
	status := pod.Status
	if err := kube.Create(ctx, pod); err != nil {
		return fmt.Errorf("pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	if node == "" || status.Phase == "" {
		return nil
	}
	pod.Status = status
	if err := kube.Status().Update(ctx, pod); err != nil {
		return fmt.Errorf("pod %s/%s status: %w", p.Namespace, p.Name, err)
	}
	return nil
}

// parallel runs fn for 0..n-1 on loadParallelism workers and returns the first error.
func parallel(ctx context.Context, n int, fn func(i int) error) error {
	var mu sync.Mutex
	var first error
	workqueue.ParallelizeUntil(ctx, loadParallelism, n, func(i int) {
		if err := fn(i); err != nil {
			mu.Lock()
			if first == nil {
				first = err
			}
			mu.Unlock()
		}
	})
	return first
}
