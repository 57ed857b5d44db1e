package kubetest

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// DefaultNodeCapacity is what ReadyNode gives a Node when the caller passes none.
var DefaultNodeCapacity = corev1.ResourceList{
	corev1.ResourceCPU:    resource.MustParse("4"),
	corev1.ResourceMemory: resource.MustParse("8Gi"),
	corev1.ResourcePods:   resource.MustParse("110"),
}

// ReadyNode creates a Node that kube-scheduler will bind pods to, as a kubelet would leave it: capacity and
// allocatable set, condition Ready, and the node.kubernetes.io/not-ready taint that the apiserver adds at
// creation removed (the node-lifecycle controller that would remove it does not run here). The Node is
// deleted when the test ends.
func ReadyNode(tb testing.TB, c kubernetes.Interface, name string, capacity corev1.ResourceList) string {
	tb.Helper()
	if capacity == nil {
		capacity = DefaultNodeCapacity
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := c.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name,
		Labels: map[string]string{corev1.LabelHostname: name}}}, metav1.CreateOptions{})
	if err != nil {
		tb.Fatalf("creating node %s: %v", name, err)
	}
	tb.Cleanup(func() { _ = c.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	// kube-controller-manager (its TTL controller) may write the new Node at once: re-read on conflict.
	now := metav1.Now()
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := c.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		n.Status = corev1.NodeStatus{Capacity: capacity, Allocatable: capacity,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
				Reason: "KubeletReady", LastHeartbeatTime: now, LastTransitionTime: now}}}
		_, err = c.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		tb.Fatalf("setting node %s ready: %v", name, err)
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := c.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		var kept []corev1.Taint
		for _, t := range n.Spec.Taints {
			if t.Key != corev1.TaintNodeNotReady {
				kept = append(kept, t)
			}
		}
		n.Spec.Taints = kept
		_, err = c.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		tb.Fatalf("removing the not-ready taint from node %s: %v", name, err)
	}
	return name
}
