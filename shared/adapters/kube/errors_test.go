package kube

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var podsResource = schema.GroupResource{Resource: "pods"}

func statusError(code int32, message string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: code, Message: message}}
}

func TestMapErrorToDomainErrors(t *testing.T) {
	cases := []struct {
		name string
		err  error
		is   func(error) bool
	}{
		{"not found", apierrors.NewNotFound(podsResource, "p"), IsNotFound},
		{"conflict", apierrors.NewConflict(podsResource, "p", errors.New("changed")), IsConflict},
		{"already exists", apierrors.NewAlreadyExists(podsResource, "p"), IsConflict},
		{"forbidden", apierrors.NewForbidden(podsResource, "p", errors.New("rbac")), IsForbidden},
		{"unauthorized", apierrors.NewUnauthorized("expired"), IsUnauthorized},
		{"invalid", apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "p", nil), IsInvalid},
		{"bad request", apierrors.NewBadRequest("bad"), IsInvalid},
		{"throttled", apierrors.NewTooManyRequests("slow down", 1), IsUnavailable},
		{"internal", apierrors.NewInternalError(errors.New("boom")), IsUnavailable},
		{"unavailable", apierrors.NewServiceUnavailable("later"), IsUnavailable},
		{"timeout", apierrors.NewTimeoutError("slow", 10), IsUnavailable},
		{"bare 503", statusError(http.StatusServiceUnavailable, "x"), IsUnavailable},
		{"several PDBs", statusError(http.StatusInternalServerError,
			"This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."), IsPDBMisconfigured},
		{"connection refused", fmt.Errorf("dial tcp 127.0.0.1:1: connect: connection refused"), IsUnavailable},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := mapError(c.err)
			assert.True(t, c.is(err), "%v", err)
			assert.Equal(t, c.err.Error(), err.Error(), "the message is the cause's")
			assert.ErrorIs(t, err, c.err, "the cause stays reachable")
		})
	}
	assert.NoError(t, mapError(nil))
	assert.Equal(t, context.Canceled, mapError(context.Canceled), "cancellation is not a domain error")
	assert.False(t, IsPDBMisconfigured(mapError(apierrors.NewInternalError(errors.New("etcd")))))
	assert.NoError(t, IgnoreNotFound(mapError(apierrors.NewNotFound(podsResource, "p"))))
	assert.Error(t, IgnoreNotFound(mapError(apierrors.NewConflict(podsResource, "p", errors.New("x")))))
}

// Transient answers for a client-go error, unwrapped, what IsUnavailable answers for the mapped one.
func TestTransientIsIsUnavailableForClientGoErrors(t *testing.T) {
	for _, err := range []error{apierrors.NewTimeoutError("slow", 10), apierrors.NewTooManyRequests("slow down", 1),
		apierrors.NewInternalError(errors.New("boom")), fmt.Errorf("dial tcp 127.0.0.1:1: connect: connection refused")} {
		assert.True(t, Transient(err), "%v", err)
	}
	for _, err := range []error{nil, context.Canceled, apierrors.NewNotFound(podsResource, "p"),
		apierrors.NewForbidden(podsResource, "p", errors.New("rbac")), apierrors.NewBadRequest("bad")} {
		assert.False(t, Transient(err), "%v", err)
	}
}

func TestDisruptionBudgetRefusalIsNotThrottling(t *testing.T) {
	refusal := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
	refusal.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: policyv1.DisruptionBudgetCause,
		Message: "The disruption budget web needs 1 healthy pods and has 1 currently"}}
	reason, ok := isDisruptionBudgetRefusal(refusal)
	assert.True(t, ok)
	assert.Equal(t, "The disruption budget web needs 1 healthy pods and has 1 currently", reason)

	_, ok = isDisruptionBudgetRefusal(apierrors.NewTooManyRequests("too many requests, retry later", 1))
	assert.False(t, ok, "priority-and-fairness throttling is not a budget")
	_, ok = isDisruptionBudgetRefusal(apierrors.NewNotFound(podsResource, "p"))
	assert.False(t, ok)
}
