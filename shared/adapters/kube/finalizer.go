package kube

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// TerminationFinalizer is on every Node Nodewright registers, so that deleting the Node (kubectl delete
// node, a NodePool removed) goes through the termination flow: drain, terminate the instance, then drop
// the finalizer. It is Nodewright's own, not karpenter.sh/termination: Karpenter's termination controller
// takes over any deleting Node that carries its finalizer and would release it without terminating.
const TerminationFinalizer = "nodewright.sh/termination"

// AddFinalizer puts finalizer on the Node; a Node that has it already is not written. A Node that is
// being deleted gets no new finalizer (the API server refuses it), which is not an error.
func (a *Actions) AddFinalizer(ctx context.Context, node, finalizer string) error {
	return a.updateFinalizers(ctx, node, "adding finalizer "+finalizer+" to", func(fs []string, deleting bool) ([]string, bool) {
		if deleting || slices.Contains(fs, finalizer) {
			return fs, false
		}
		return append(slices.Clone(fs), finalizer), true
	})
}

// RemoveFinalizer takes finalizer off the Node; a Node without it, or one that is gone, is left alone.
func (a *Actions) RemoveFinalizer(ctx context.Context, node, finalizer string) error {
	err := a.updateFinalizers(ctx, node, "removing finalizer "+finalizer+" from", func(fs []string, _ bool) ([]string, bool) {
		out := slices.DeleteFunc(slices.Clone(fs), func(f string) bool { return f == finalizer })
		return out, len(out) != len(fs)
	})
	return IgnoreNotFound(err)
}

// updateFinalizers reads the Node and writes the finalizers change computes (see patchNodeAt).
func (a *Actions) updateFinalizers(ctx context.Context, node, doing string, change func([]string, bool) ([]string, bool)) error {
	return a.patchNodeAt(ctx, node, doing, func(n *corev1.Node) (map[string]any, bool) {
		fs, changed := change(n.Finalizers, n.DeletionTimestamp != nil)
		if fs == nil {
			fs = []string{}
		}
		return map[string]any{"metadata": map[string]any{"finalizers": fs}}, changed
	})
}
