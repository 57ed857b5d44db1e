package footprint

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// probePodName names the pod AwaitWebhook sends its dry-run updates for.
const probePodName = "nodewright-webhook-probe"

// AwaitWebhook waits until the API server calls the webhook that was just registered. The API server
// picks webhook configurations up from a watch, so status updates made right after registering can go
// unseen. It creates a pod no scheduler will take, sends dry-run status updates that mark it Unschedulable
// (the webhook's sideEffects are NoneOnDryRun, so nothing is enqueued) until calls reports more requests
// than before, and deletes the pod.
func AwaitWebhook(ctx context.Context, c kubernetes.Interface, namespace string, calls func() int, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	pods := c.CoreV1().Pods(namespace)
	pod, err := pods.Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: probePodName, Labels: labels},
		Spec: corev1.PodSpec{
			SchedulerName: "nodewright-webhook-probe", // no scheduler serves it: the pod stays as created
			Containers:    []corev1.Container{{Name: "probe", Image: "registry.k8s.io/pause:3.10"}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("creating the webhook probe pod: %w", err)
	}
	defer func() {
		// The probe pod is inert (never scheduled, never marked), so a failed delete leaves nothing that acts.
		zero := int64(0)
		_ = pods.Delete(context.Background(), probePodName, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	}()
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
		Reason: corev1.PodReasonUnschedulable, Message: "webhook probe", LastTransitionTime: metav1.Now()}}
	before := calls()
	for {
		_, err := pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
		if calls() > before {
			return nil
		}
		select {
		case <-ctx.Done():
			if err != nil {
				return fmt.Errorf("the API server never called the webhook within %s: last dry-run update: %w", timeout, err)
			}
			return fmt.Errorf("the API server never called the webhook within %s", timeout)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
