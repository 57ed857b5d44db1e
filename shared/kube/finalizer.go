package kube

import (
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
)

// TerminationFinalizer is the finalizer every Node Nodewright registers carries, so that deleting the
// Node (kubectl delete node) leaves it in place until Nodewright has drained it and its instance is
// gone. It is Nodewright's own, not Karpenter's karpenter.sh/termination: Karpenter's termination
// controller takes over any deleting Node with its finalizer and the karpenter.k8s.aws/ec2nodeclass
// label, drains it and then releases it without terminating the instance.
const TerminationFinalizer = "nodewright.sh/termination"

// RemoveFinalizer takes finalizer off the Node. A Node without it, or a Node that is gone, is left alone.
// The write is a JSON patch that tests the finalizer list it read, so a concurrent change to the list
// makes it re-read rather than overwrite that change. Once a deleting Node loses its last finalizer,
// the API server removes it.
func (a *Actions) RemoveFinalizer(ctx context.Context, node, finalizer string) error {
	err := retry.OnError(taintBackoff, func(err error) bool { return IsConflict(err) || IsInvalid(err) }, func() error {
		n, err := a.client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return mapError(err)
		}
		kept := make([]string, 0, len(n.Finalizers))
		for _, f := range n.Finalizers {
			if f != finalizer {
				kept = append(kept, f)
			}
		}
		if len(kept) == len(n.Finalizers) {
			return nil
		}
		// "test" makes the patch fail (422, invalid) when the list changed since it was read.
		patch, err := json.Marshal([]map[string]any{
			{"op": "test", "path": "/metadata/finalizers", "value": n.Finalizers},
			{"op": "replace", "path": "/metadata/finalizers", "value": kept},
		})
		if err != nil {
			return err
		}
		_, err = a.client.CoreV1().Nodes().Patch(ctx, node, types.JSONPatchType, patch, metav1.PatchOptions{})
		return mapError(err)
	})
	if err == nil || IsNotFound(err) {
		return nil
	}
	return fmt.Errorf("removing finalizer %s from node %s: %w", finalizer, node, err)
}
