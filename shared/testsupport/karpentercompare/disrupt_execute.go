package main

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/controllers/disruption"
	karpsched "sigs.k8s.io/karpenter/pkg/scheduling"
	"sigs.k8s.io/karpenter/pkg/utils/resources"
)

// execute carries out a command Karpenter's disruption controller started, as a cluster with its
// other controllers would: each replacement NodeClaim launches at its launch offering and its node
// registers and initializes (with the DaemonSet pods that run on it); the orchestration queue then
// deletes the candidates' NodeClaims; their nodes go, and their pods come back where Karpenter's
// simulation placed them.
func (k *karpenterSide) execute(ctx context.Context, cmd *disruption.Command) error {
	for _, r := range cmd.Replacements {
		if err := k.launch(ctx, r); err != nil {
			return err
		}
	}
	t := time.Now()
	_, err := k.queue.Reconcile(ctx, cmd.Candidates[0].NodeClaim)
	k.out.Decision += time.Since(t)
	if err != nil {
		return fmt.Errorf("karpenter orchestration queue: %w", err)
	}
	if !cmd.Succeeded {
		return fmt.Errorf("karpenter command on %d node(s) did not complete", len(cmd.Candidates))
	}
	targets := map[types.NamespacedName]string{}
	for _, r := range cmd.Replacements {
		for _, p := range r.Pods {
			targets[client.ObjectKeyFromObject(p)] = r.Name
		}
	}
	for _, e := range cmd.Results.ExistingNodes {
		for _, p := range e.Pods {
			targets[client.ObjectKeyFromObject(p)] = e.Name()
		}
	}
	for _, c := range cmd.Candidates {
		if err := k.removeNode(ctx, c.Name(), c.NodeClaim.Name, targets); err != nil {
			return err
		}
	}
	k.out.Commands++
	k.out.Disrupted += len(cmd.Candidates)
	k.out.Launched += len(cmd.Replacements)
	fmt.Fprintf(k.progress, "  karpenter %s %s: %d node(s) -> %d replacement(s)\n", cmd.Reason(), cmd.ConsolidationType(), len(cmd.Candidates), len(cmd.Replacements))
	return nil
}

// launch makes a replacement NodeClaim a ready node at the offering its launch takes.
func (k *karpenterSide) launch(ctx context.Context, r *disruption.Replacement) error {
	requests := r.Spec.Resources.Requests
	if len(requests) == 0 {
		requests = resources.RequestsForPods(r.Pods...)
	}
	it, offering, err := launchChoice(r.NodeClaim, requests)
	if err != nil {
		return err
	}
	nc := &karpv1.NodeClaim{}
	if err := k.kube.Get(ctx, types.NamespacedName{Name: r.Name}, nc); err != nil {
		return fmt.Errorf("replacement NodeClaim %s: %w", r.Name, err)
	}
	labels := map[string]string{}
	for key, req := range it.Requirements {
		if req.Operator() == corev1.NodeSelectorOpIn && req.Len() > 0 {
			labels[key] = req.Values()[0]
		}
	}
	for _, req := range offering.Requirements {
		labels[req.Key] = req.Any()
	}
	for key, v := range nc.Labels {
		labels[key] = v
	}
	labels[corev1.LabelHostname] = nc.Name
	labels[karpv1.NodeRegisteredLabelKey] = "true"
	labels[karpv1.NodeInitializedLabelKey] = "true"
	nc.Labels = labels
	if err := k.kube.Update(ctx, nc); err != nil {
		return fmt.Errorf("replacement NodeClaim %s: %w", r.Name, err)
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: nc.Name, Labels: labels},
		Spec:       corev1.NodeSpec{ProviderID: "karpenter-compare:///" + nc.Name, Taints: nc.Spec.Taints},
	}
	if err := k.kube.Create(ctx, node); err != nil {
		return fmt.Errorf("replacement node %s: %w", nc.Name, err)
	}
	if err := readyNode(ctx, k.kube, node, nc.Spec.Taints, corev1.NodeStatus{
		Capacity: it.Capacity, Allocatable: it.Allocatable(),
		Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
	}); err != nil {
		return err
	}
	nc.Status.ProviderID = node.Spec.ProviderID
	nc.Status.NodeName = node.Name
	nc.Status.Capacity, nc.Status.Allocatable = it.Capacity, it.Allocatable()
	for _, cond := range []string{karpv1.ConditionTypeLaunched, karpv1.ConditionTypeRegistered, karpv1.ConditionTypeInitialized, karpv1.ConditionTypeConsolidatable} {
		nc.StatusConditions().SetTrue(cond)
	}
	if err := k.kube.Status().Update(ctx, nc); err != nil {
		return fmt.Errorf("replacement NodeClaim %s status: %w", nc.Name, err)
	}
	if err := k.reconcile(ctx, k.claims, "", nc.Name); err != nil {
		return err
	}
	if err := k.reconcile(ctx, k.nodes, "", node.Name); err != nil {
		return err
	}
	return k.startDaemonPods(ctx, node)
}

// startDaemonPods creates the pod of every DaemonSet whose pods tolerate the node's taints and match
// its labels, as the DaemonSet controller would.
func (k *karpenterSide) startDaemonPods(ctx context.Context, node *corev1.Node) error {
	for _, ds := range k.in.DaemonSets {
		pod := &corev1.Pod{ObjectMeta: ds.Spec.Template.ObjectMeta, Spec: ds.Spec.Template.Spec}
		pod = pod.DeepCopy()
		pod.Namespace = ds.Namespace
		if pod.Namespace == "" {
			pod.Namespace = metav1.NamespaceDefault
		}
		pod.Name = ds.Name + "-" + node.Name
		yes := true
		pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: ds.Name, UID: types.UID("ds-" + ds.Name), Controller: &yes}}
		if karpsched.Taints(node.Spec.Taints).ToleratesPod(pod) != nil {
			continue
		}
		if !karpsched.NewLabelRequirements(node.Labels).IsCompatible(karpsched.NewPodRequirements(pod), karpsched.AllowUndefinedWellKnownLabels) {
			continue
		}
		pod.Status = corev1.PodStatus{Phase: corev1.PodRunning}
		if err := createPod(ctx, k.kube, pod, node.Name); err != nil {
			return err
		}
		if err := k.reconcile(ctx, k.pods, pod.Namespace, pod.Name); err != nil {
			return err
		}
	}
	return nil
}

// removeNode deletes a disrupted node (its NodeClaim is already gone) and rebinds its pods to their
// targets; a DaemonSet pod goes with its node, a pod without a target stays pending.
func (k *karpenterSide) removeNode(ctx context.Context, node, claim string, targets map[types.NamespacedName]string) error {
	pods := &corev1.PodList{}
	if err := k.kube.List(ctx, pods, client.MatchingFields{"spec.nodeName": node}); err != nil {
		return err
	}
	if err := k.kube.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("node %s: %w", node, err)
	}
	if err := k.reconcile(ctx, k.claims, "", claim); err != nil {
		return err
	}
	if err := k.reconcile(ctx, k.nodes, "", node); err != nil {
		return err
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		key := client.ObjectKeyFromObject(p)
		if err := k.kube.Delete(ctx, p, client.GracePeriodSeconds(0)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("pod %s: %w", key, err)
		}
		if !ownedByDaemonSet(p) {
			target, ok := targets[key]
			if !ok {
				k.out.Unplaced++
			}
			if err := createPod(ctx, k.kube, p, target); err != nil {
				return err
			}
		}
		if err := k.reconcile(ctx, k.pods, key.Namespace, key.Name); err != nil {
			return err
		}
	}
	return nil
}

func ownedByDaemonSet(p *corev1.Pod) bool {
	for _, o := range p.OwnerReferences {
		if o.Kind == "DaemonSet" {
			return true
		}
	}
	return false
}
