package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// Actions changes Nodes and pods. Every method is idempotent: repeating a call that already took effect
// succeeds without writing, and deleting what is already gone succeeds.
type Actions struct {
	client kubernetes.Interface
}

// NewActions returns Actions that write through client.
func NewActions(client kubernetes.Interface) *Actions { return &Actions{client: client} }

// PodRef names a pod; a non-empty UID makes evictions and deletions apply only to that incarnation.
type PodRef struct {
	Namespace, Name string
	UID             types.UID
}

func (p PodRef) String() string { return p.Namespace + "/" + p.Name }

// Taint adds taint to the Node, or updates the value of a taint with the same key and effect. It writes
// nothing when the Node already has it. Concurrent changes to the Node's taints are retried on conflict,
// never overwritten.
func (a *Actions) Taint(ctx context.Context, node string, taint corev1.Taint) error {
	return a.updateTaints(ctx, node, "tainting", func(taints []corev1.Taint) ([]corev1.Taint, bool) {
		for i := range taints {
			if taints[i].MatchTaint(&taint) {
				if taints[i].Value == taint.Value {
					return taints, false
				}
				out := append([]corev1.Taint(nil), taints...)
				out[i].Value = taint.Value
				return out, true
			}
		}
		t := taint
		t.TimeAdded = nil
		return append(append([]corev1.Taint(nil), taints...), t), true
	})
}

// Untaint removes the taint with taint's key and effect from the Node; a Node without it, or a Node that
// is gone, is left alone.
func (a *Actions) Untaint(ctx context.Context, node string, taint corev1.Taint) error {
	err := a.updateTaints(ctx, node, "untainting", func(taints []corev1.Taint) ([]corev1.Taint, bool) {
		out := make([]corev1.Taint, 0, len(taints))
		for i := range taints {
			if !taints[i].MatchTaint(&taint) {
				out = append(out, taints[i])
			}
		}
		return out, len(out) != len(taints)
	})
	return IgnoreNotFound(err)
}

// taintBackoff spaces re-reads after a conflict; other writers (kubelet status, other functions, node
// controllers) touch a busy Node often, so it tries longer than client-go's DefaultRetry.
var taintBackoff = wait.Backoff{Steps: 12, Duration: 20 * time.Millisecond, Factor: 1.5, Jitter: 0.5, Cap: time.Second}

// updateTaints reads the Node, lets change compute its new taints, and writes them (see patchNodeAt).
func (a *Actions) updateTaints(ctx context.Context, node, doing string,
	change func([]corev1.Taint) ([]corev1.Taint, bool)) error {
	return a.patchNodeAt(ctx, node, doing, func(n *corev1.Node) (map[string]any, bool) {
		taints, changed := change(n.Spec.Taints)
		if taints == nil {
			taints = []corev1.Taint{}
		}
		return map[string]any{"spec": map[string]any{"taints": taints}}, changed
	})
}

// patchNodeAt reads the Node, lets change compute a merge patch from it (or say nothing changes), and
// writes the patch with the resourceVersion it read, so a concurrent writer makes it re-read instead of
// losing that writer's change.
func (a *Actions) patchNodeAt(ctx context.Context, node, doing string, change func(*corev1.Node) (map[string]any, bool)) error {
	err := retry.RetryOnConflict(taintBackoff, func() error {
		n, err := a.client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return err
		}
		patch, changed := change(n)
		if !changed {
			return nil
		}
		meta, _ := patch["metadata"].(map[string]any)
		if meta == nil {
			meta = map[string]any{}
		}
		meta["resourceVersion"] = n.ResourceVersion
		patch["metadata"] = meta
		body, err := json.Marshal(patch)
		if err != nil {
			return err
		}
		_, err = a.client.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, body, metav1.PatchOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("%s node %s: %w", doing, node, mapError(err))
	}
	return nil
}

// Label sets labels on the Node; a nil value removes that label. Labels already as asked are not
// written again.
func (a *Actions) Label(ctx context.Context, node string, labels map[string]*string) error {
	n, err := a.client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("labelling node %s: %w", node, mapError(err))
	}
	diff := map[string]*string{}
	for k, v := range labels {
		cur, ok := n.Labels[k]
		if (v == nil && ok) || (v != nil && (!ok || cur != *v)) {
			diff[k] = v
		}
	}
	if len(diff) == 0 {
		return nil
	}
	return a.patchNode(ctx, node, "labelling", map[string]any{"metadata": map[string]any{"labels": diff}})
}

// Annotate sets annotations on the Node. Annotations already as asked are not written again; others
// on the Node are left alone.
func (a *Actions) Annotate(ctx context.Context, node string, annotations map[string]string) error {
	n, err := a.client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("annotating node %s: %w", node, mapError(err))
	}
	diff := map[string]string{}
	for k, v := range annotations {
		if cur, ok := n.Annotations[k]; !ok || cur != v {
			diff[k] = v
		}
	}
	if len(diff) == 0 {
		return nil
	}
	return a.patchNode(ctx, node, "annotating", map[string]any{"metadata": map[string]any{"annotations": diff}})
}

// Cordon marks the Node unschedulable.
func (a *Actions) Cordon(ctx context.Context, node string) error {
	return a.setUnschedulable(ctx, node, true)
}

// Uncordon marks the Node schedulable again.
func (a *Actions) Uncordon(ctx context.Context, node string) error {
	return a.setUnschedulable(ctx, node, false)
}

func (a *Actions) setUnschedulable(ctx context.Context, node string, unschedulable bool) error {
	doing := "cordoning"
	if !unschedulable {
		doing = "uncordoning"
	}
	n, err := a.client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("%s node %s: %w", doing, node, mapError(err))
	}
	if n.Spec.Unschedulable == unschedulable {
		return nil
	}
	return a.patchNode(ctx, node, doing, map[string]any{"spec": map[string]any{"unschedulable": unschedulable}})
}

func (a *Actions) patchNode(ctx context.Context, node, doing string, patch map[string]any) error {
	body, err := json.Marshal(patch)
	if err != nil {
		return fmt.Errorf("%s node %s: %w", doing, node, err)
	}
	if _, err := a.client.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, body, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("%s node %s: %w", doing, node, mapError(err))
	}
	return nil
}

// DeleteOptions tunes DeletePod.
type DeleteOptions struct {
	// GracePeriod overrides the pod's terminationGracePeriodSeconds when not nil (rounded down to whole
	// seconds, at least 1 s unless Force is set).
	GracePeriod *time.Duration
	// Force deletes the pod immediately (grace period 0), bypassing the kubelet's graceful shutdown; use
	// only when its Node is gone or a deadline has passed.
	Force bool
}

// DeletePod deletes the pod directly (bypassing PodDisruptionBudgets). A pod already gone, or replaced by
// another with the same name when ref has a UID, counts as deleted.
func (a *Actions) DeletePod(ctx context.Context, ref PodRef, o DeleteOptions) error {
	opts := metav1.DeleteOptions{}
	if ref.UID != "" {
		opts.Preconditions = &metav1.Preconditions{UID: &ref.UID}
	}
	switch {
	case o.Force:
		opts.GracePeriodSeconds = new(int64)
	case o.GracePeriod != nil:
		secs := max(int64(*o.GracePeriod/time.Second), 1)
		opts.GracePeriodSeconds = &secs
	}
	err := mapError(a.client.CoreV1().Pods(ref.Namespace).Delete(ctx, ref.Name, opts))
	if err == nil || IsNotFound(err) || (ref.UID != "" && IsConflict(err)) {
		return nil
	}
	return fmt.Errorf("deleting pod %s: %w", ref, err)
}

// DeleteNode deletes the Node object; a Node already gone counts as deleted.
func (a *Actions) DeleteNode(ctx context.Context, node string) error {
	err := mapError(a.client.CoreV1().Nodes().Delete(ctx, node, metav1.DeleteOptions{}))
	if err == nil || IsNotFound(err) {
		return nil
	}
	return fmt.Errorf("deleting node %s: %w", node, err)
}

// ForgetPods force-deletes every pod bound to node, for a Node whose instance is already gone: nothing
// runs them any more, and their controllers recreate them at once instead of after the pod garbage
// collector's wait for orphans. It returns how many it deleted.
func (a *Actions) ForgetPods(ctx context.Context, node string) (int, error) {
	pods, err := a.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
	if err != nil {
		return 0, fmt.Errorf("listing the pods of node %s: %w", node, mapError(err))
	}
	n := 0
	for _, p := range pods.Items {
		if err := a.DeletePod(ctx, PodRef{Namespace: p.Namespace, Name: p.Name, UID: p.UID}, DeleteOptions{Force: true}); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
