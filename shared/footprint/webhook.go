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
	// WebhookTimeoutSeconds is short: the webhook always allows, so the API server should never wait long.
	WebhookTimeoutSeconds = 2
)

// Match conditions (CEL, evaluated by the API server) so that only updates that leave a pod unbound and
// marked Unschedulable by kube-scheduler reach the webhook — a tiny fraction of pods/status traffic.
var matchConditions = []admissionregistrationv1.MatchCondition{
	{Name: "pod-not-bound", Expression: `!has(object.spec.nodeName) || object.spec.nodeName == ""`},
	{Name: "pod-unschedulable", Expression: `has(object.status.conditions) && object.status.conditions.exists(c, ` +
		`c.type == "PodScheduled" && c.status == "False" && has(c.reason) && c.reason == "Unschedulable")`},
}

// WebhookOptions says where the webhook is.
type WebhookOptions struct {
	// URL is the webhook's full https URL, secret path token included.
	URL string
	// CABundle is the PEM CA that signs the webhook's certificate when the system roots do not (the local
	// sandbox); empty for a Lambda Function URL.
	CABundle []byte
}

// ValidatingWebhookConfiguration returns the webhook registration: pods/status UPDATEs only, failurePolicy
// Ignore (the cluster never depends on Nodewright), sideEffects NoneOnDryRun (the webhook enqueues only
// for real updates), and the match conditions above.
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
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"},
					Resources: []string{"pods/status"}, Scope: &scope},
			}},
			MatchConditions: matchConditions,
		}},
	}, nil
}
