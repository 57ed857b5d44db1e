package kube

import (
	"context"
	"fmt"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// EvictionOutcome says what an eviction request achieved.
type EvictionOutcome string

const (
	// Evicted: the API server accepted the eviction; the pod is being deleted gracefully.
	Evicted EvictionOutcome = "Evicted"
	// AlreadyGone: the pod does not exist any more, or the name now belongs to another pod (UID
	// precondition failed). Nothing is left to evict.
	AlreadyGone EvictionOutcome = "AlreadyGone"
	// Blocked: a PodDisruptionBudget allows no disruption now (HTTP 429). Try again later.
	Blocked EvictionOutcome = "Blocked"
)

// EvictionResult is the outcome of one eviction request.
type EvictionResult struct {
	Outcome EvictionOutcome
	// Reason is the API server's explanation when Blocked, e.g. which budget refused and why.
	Reason string
}

// Evict asks the Eviction API (policy/v1) to evict the pod, honouring its PodDisruptionBudgets. It makes
// exactly one request: a budget's refusal comes back at once as a Blocked result, because client-go's
// automatic retry of responses that carry Retry-After (the API server sends "Retry-After: 10" while a
// budget is still being processed, which client-go would retry ten times) is switched off for this call;
// the caller decides when to try again. Errors: ErrPDBMisconfigured when the budgets make eviction
// impossible (e.g. several budgets select the pod), ErrUnavailable for throttling and server errors, and
// the other domain errors of errors.go.
func (a *Actions) Evict(ctx context.Context, ref PodRef) (EvictionResult, error) {
	eviction := &policyv1.Eviction{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "Eviction"},
		ObjectMeta: metav1.ObjectMeta{Name: ref.Name, Namespace: ref.Namespace},
	}
	if ref.UID != "" {
		eviction.DeleteOptions = &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &ref.UID}}
	}
	// The policy/v1 client encodes the body as policy/v1; the subresource lives under the core path.
	err := a.client.PolicyV1().RESTClient().Post().AbsPath("/api/v1").
		Namespace(ref.Namespace).Resource("pods").Name(ref.Name).SubResource("eviction").
		MaxRetries(0).
		Body(eviction).
		Do(ctx).Error()
	if err == nil {
		return EvictionResult{Outcome: Evicted}, nil
	}
	if reason, ok := isDisruptionBudgetRefusal(err); ok {
		return EvictionResult{Outcome: Blocked, Reason: reason}, nil
	}
	err = mapError(err)
	if IsNotFound(err) || (ref.UID != "" && IsConflict(err)) {
		return EvictionResult{Outcome: AlreadyGone}, nil
	}
	return EvictionResult{}, fmt.Errorf("evicting pod %s: %w", ref, err)
}
