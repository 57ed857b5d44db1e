package footprint

import (
	"fmt"
	"net/url"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Webhook object names.
const (
	WebhookConfigName = "nodewright-pending-pods"
	WebhookName       = "pending-pods.nodewright.sh"
	// WebhookTimeoutSeconds is short: the webhook always allows, so the API server should never wait long
	// for it. It delays only the Event's write, which kube-scheduler makes from its event goroutine.
	WebhookTimeoutSeconds = 1
)

// The webhook is called for the creation of kube-scheduler's FailedScheduling Events, never for pod
// updates. kube-scheduler writes the PodScheduled=False status update inside its scheduling loop (when
// SchedulerAsyncAPICalls is off, as on current EKS versions), so a webhook on pods/status would make every
// pod wait for each unschedulable pod's round trip. Its Events go out from a separate goroutine and client
// (client-go's event broadcaster): the loop never waits for them.
//
// The broadcaster creates an Event the first time a pod fails and again only when the pod's
// resourceVersion has changed since (its status was updated); repeats of the same failure become PATCHes
// of the Event's series, which are not CREATEs and never reach the webhook. So the webhook is called
// about twice per pending pod, and once more whenever the scheduler's message about the pod changes.

// eventGroups are the two APIs an Event can be created through: kube-scheduler uses events.k8s.io/v1,
// other writers the core API. Both are registered so that neither is missed whatever the match policy.
var eventGroups = []string{"", "events.k8s.io"}

// Match conditions (CEL, evaluated by the API server) let through only FailedScheduling Events about a
// pod, whichever API created them: events.k8s.io/v1 names the pod in regarding, core v1 in
// involvedObject. Autoscalers' own FailedScheduling Events are left out: Nodewright writes one for each
// pod it cannot provision (as Karpenter does, beside which it may run), and reacting to it would wake the
// provisioner for the pod it has just judged. kube-scheduler's Event about the same pod is the signal.
//
// The API server evaluates them for every Event created in the cluster, kubelets' included, so they are
// one expression: it evaluates every condition of a webhook whatever the first one said, while && stops
// at the first false term, and an Event that is not a FailedScheduling one (nearly all of them) costs a
// single comparison. Each source of the reporting component is compared directly, without building a
// list to search. On the local kube-apiserver (BenchmarkMatchConditionsOnFilteredEvents, medians of
// three runs each) this took the evaluation for a kubelet's Event from 100 to 72 µs and for Nodewright's
// own FailedScheduling Event from 105 to 83 µs. Most of what is left is the API server's conversion of
// the Event for CEL, which any match condition pays.
var matchConditions = []admissionregistrationv1.MatchCondition{{
	Name: "kube-schedulers-failedscheduling-about-a-pod",
	Expression: `has(object.reason) && object.reason == "FailedScheduling" && ` +
		`((has(object.regarding) && has(object.regarding.kind) && object.regarding.kind == "Pod") || ` +
		`(has(object.involvedObject) && has(object.involvedObject.kind) && object.involvedObject.kind == "Pod")) && ` +
		notAnAutoscaler("has(object.reportingController)", "object.reportingController") + " && " +
		notAnAutoscaler("has(object.reportingComponent)", "object.reportingComponent") + " && " +
		notAnAutoscaler("has(object.source) && has(object.source.component)", "object.source.component"),
}}

// notAnAutoscaler is the CEL term that holds unless field, present when present holds, names Karpenter
// or Nodewright ("nodewright", or "nodewright-" and a function's name).
func notAnAutoscaler(present, field string) string {
	return fmt.Sprintf(`!(%s && (%s == "karpenter" || %s == "nodewright" || %s.startsWith("nodewright-")))`, present, field, field, field)
}

// WebhookOptions says where the webhook is.
type WebhookOptions struct {
	// URL is the webhook's full https URL, secret path token included.
	URL string
	// CABundle is the PEM CA that signs the webhook's certificate when the system roots do not (the local
	// sandbox); empty for a Lambda Function URL.
	CABundle []byte
}

// ValidatingWebhookConfiguration returns the webhook registration: Event CREATEs only, filtered by the
// match conditions above; failurePolicy Ignore (the cluster never depends on Nodewright), sideEffects
// NoneOnDryRun (the webhook enqueues only for real creations).
func ValidatingWebhookConfiguration(o WebhookOptions) (*admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	u, err := url.Parse(o.URL)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, fmt.Errorf("webhook URL %q must be an https URL without user, query or fragment", o.URL)
	}
	if len(o.CABundle) > 0 {
		if err := CheckCABundle(o.CABundle); err != nil {
			return nil, fmt.Errorf("CA bundle: %w", err)
		}
	}
	ignore := admissionregistrationv1.Ignore
	sideEffects := admissionregistrationv1.SideEffectClassNoneOnDryRun
	equivalent := admissionregistrationv1.Equivalent
	scope := admissionregistrationv1.NamespacedScope
	timeout := int32(WebhookTimeoutSeconds)
	return &admissionregistrationv1.ValidatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: WebhookConfigName, Labels: labels},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    WebhookName,
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &o.URL, CABundle: o.CABundle},
			AdmissionReviewVersions: []string{"v1"},
			SideEffects:             &sideEffects,
			FailurePolicy:           &ignore,
			MatchPolicy:             &equivalent,
			TimeoutSeconds:          &timeout,
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule: admissionregistrationv1.Rule{APIGroups: eventGroups, APIVersions: []string{"v1"},
					Resources: []string{"events"}, Scope: &scope},
			}},
			MatchConditions: matchConditions,
		}},
	}, nil
}
