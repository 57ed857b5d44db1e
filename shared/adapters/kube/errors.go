package kube

import (
	"context"
	"errors"
	"net/http"
	"strings"

	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// The domain errors of this adapter. Every error a method returns for an API server response wraps one
// of them (test with the IsX helpers) and keeps the original client-go error reachable with errors.As.
var (
	// ErrNotFound: the object does not exist.
	ErrNotFound = errors.New("not found")
	// ErrConflict: the object changed underneath a write, or a precondition failed.
	ErrConflict = errors.New("conflict")
	// ErrForbidden: the caller's role does not allow the request (RBAC or an admission refusal).
	ErrForbidden = errors.New("forbidden")
	// ErrInvalid: the API server rejected the request as malformed or invalid.
	ErrInvalid = errors.New("invalid request")
	// ErrUnauthorized: the bearer token was refused (expired, or the role has no access entry).
	ErrUnauthorized = errors.New("unauthorized")
	// ErrUnavailable: a transient failure worth retrying later: throttling (429 other than a disruption
	// budget), server errors, timeouts, connection failures.
	ErrUnavailable = errors.New("api server unavailable")
	// ErrPDBMisconfigured: eviction cannot be decided because of the pod's disruption budgets, e.g. more
	// than one PodDisruptionBudget selects the pod (the API server answers 500). Retrying does not help
	// until someone fixes the budgets.
	ErrPDBMisconfigured = errors.New("pod disruption budget misconfigured")
	// ErrIncomplete: a snapshot could not be read whole; no data is returned with it.
	ErrIncomplete = errors.New("incomplete cluster snapshot")
	// ErrMalformedReview: an AdmissionReview body was not a valid admission.k8s.io/v1 review of a pod.
	ErrMalformedReview = errors.New("malformed admission review")
)

// IsNotFound reports whether err means the object does not exist.
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

// IgnoreNotFound returns nil for a not-found error and err otherwise.
func IgnoreNotFound(err error) error {
	if IsNotFound(err) {
		return nil
	}
	return err
}

// IsConflict reports whether err is a write conflict or failed precondition.
func IsConflict(err error) bool { return errors.Is(err, ErrConflict) }

// IsForbidden reports whether err is an authorization or admission refusal.
func IsForbidden(err error) bool { return errors.Is(err, ErrForbidden) }

// IsInvalid reports whether the API server rejected the request as invalid.
func IsInvalid(err error) bool { return errors.Is(err, ErrInvalid) }

// IsUnauthorized reports whether the bearer token was refused.
func IsUnauthorized(err error) bool { return errors.Is(err, ErrUnauthorized) }

// IsUnavailable reports whether err is transient (throttled, server error, timeout, connection).
func IsUnavailable(err error) bool { return errors.Is(err, ErrUnavailable) }

// Transient reports whether err, an error client-go returned unwrapped (to a caller that uses client-go
// directly), is what IsUnavailable means: throttling, a server error, a timeout, a connection failure.
func Transient(err error) bool { return err != nil && classify(err) == ErrUnavailable }

// IsPDBMisconfigured reports whether an eviction failed because of the pod's disruption budgets.
func IsPDBMisconfigured(err error) bool { return errors.Is(err, ErrPDBMisconfigured) }

// IsIncomplete reports whether a snapshot could not be read whole.
func IsIncomplete(err error) bool { return errors.Is(err, ErrIncomplete) }

// IsMalformedReview reports whether an AdmissionReview body was rejected.
func IsMalformedReview(err error) bool { return errors.Is(err, ErrMalformedReview) }

// domainError pairs a domain error with the error that caused it; its message is the cause's.
type domainError struct {
	kind  error
	cause error
}

func (e *domainError) Error() string   { return e.cause.Error() }
func (e *domainError) Unwrap() []error { return []error{e.kind, e.cause} }

// mapError turns a client-go error into one wrapping the matching domain error. Context cancellation
// and errors it does not recognise are returned unchanged.
func mapError(err error) error {
	if err == nil {
		return nil
	}
	if kind := classify(err); kind != nil {
		return &domainError{kind: kind, cause: err}
	}
	return err
}

func classify(err error) error {
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return nil
	case apierrors.IsNotFound(err):
		return ErrNotFound
	case apierrors.IsConflict(err), apierrors.IsAlreadyExists(err):
		return ErrConflict
	case apierrors.IsForbidden(err):
		return ErrForbidden
	case apierrors.IsUnauthorized(err):
		return ErrUnauthorized
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err), apierrors.IsRequestEntityTooLargeError(err):
		return ErrInvalid
	case isMultiplePDBs(err):
		return ErrPDBMisconfigured
	case apierrors.IsTooManyRequests(err), apierrors.IsServerTimeout(err), apierrors.IsTimeout(err),
		apierrors.IsInternalError(err), apierrors.IsServiceUnavailable(err), apierrors.IsUnexpectedServerError(err):
		return ErrUnavailable
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		if status.Status().Code >= http.StatusInternalServerError {
			return ErrUnavailable
		}
		return nil
	}
	// Anything else from client-go is a transport failure: connection refused or reset, TLS, DNS.
	return ErrUnavailable
}

// isMultiplePDBs recognises the eviction subresource's answer when more than one PodDisruptionBudget
// selects the pod: a plain 500 status whose message names the budgets.
func isMultiplePDBs(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	s := status.Status()
	return s.Code == http.StatusInternalServerError && strings.Contains(s.Message, "PodDisruptionBudget")
}

// isDisruptionBudgetRefusal recognises a 429 the eviction subresource sends because a
// PodDisruptionBudget allows no disruption now (or is still being processed), as opposed to throttling.
// It returns the budget's explanation.
func isDisruptionBudgetRefusal(err error) (string, bool) {
	if !apierrors.IsTooManyRequests(err) {
		return "", false
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return "", false
	}
	s := status.Status()
	if s.Details != nil {
		for _, c := range s.Details.Causes {
			if c.Type == policyv1.DisruptionBudgetCause {
				return c.Message, true
			}
		}
	}
	if strings.Contains(s.Message, "disruption budget") {
		return s.Message, true
	}
	return "", false
}
