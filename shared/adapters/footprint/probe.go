package footprint

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// probeEventName names the Event AwaitWebhook sends its dry-run creations for.
const probeEventName = "nodewright-webhook-probe"

// AwaitWebhook waits until the API server calls the webhook that was just registered. The API server
// picks webhook configurations up from a watch, so Events created right after registering can go unseen.
// It sends dry-run creations of a FailedScheduling Event about a pod that does not exist (the webhook's
// sideEffects are NoneOnDryRun, so nothing is enqueued, and a dry run stores nothing) until calls reports
// more requests than before.
func AwaitWebhook(ctx context.Context, c kubernetes.Interface, namespace string, calls func() int, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	before := calls()
	for {
		err := SendProbe(ctx, c, namespace)
		if calls() > before {
			return nil
		}
		select {
		case <-ctx.Done():
			if err != nil {
				return fmt.Errorf("the API server never called the webhook within %s: last dry-run creation: %w", timeout, err)
			}
			return fmt.Errorf("the API server never called the webhook within %s", timeout)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// SendProbe sends one dry-run creation of a FailedScheduling Event about a pod that does not exist. The
// API server calls a registered webhook before it answers, so when SendProbe returns the call, if any,
// has been made.
func SendProbe(ctx context.Context, c kubernetes.Interface, namespace string) error {
	ev := &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: probeEventName, Namespace: namespace, Labels: labels},
		EventTime:           metav1.NowMicro(),
		ReportingController: "nodewright.sh/webhook-probe",
		ReportingInstance:   "nodewright-webhook-probe",
		Action:              "Scheduling",
		Reason:              "FailedScheduling",
		Type:                corev1.EventTypeWarning,
		Regarding:           corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: namespace, Name: probeEventName},
		Note:                "webhook probe",
	}
	_, err := c.EventsV1().Events(namespace).Create(ctx, ev, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	return err
}
