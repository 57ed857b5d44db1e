package faults

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// KubeTransport is a rest.Config WrapTransport function: every request through it is the functions'
// own (install it only on their identity's configuration) unless its context is Exempt.
func (i *Injector) KubeTransport(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		ctx := req.Context()
		if exempt(ctx) {
			return rt.RoundTrip(req)
		}
		verb, resource := kubeRequest(req)
		call := Call{Target: Kube, Operation: verb, Resource: resource}
		rule, ok := i.Decide(call)
		if !ok {
			return rt.RoundTrip(req)
		}
		switch rule.Kind {
		case Latency:
			if err := wait(ctx, rule.Delay); err != nil {
				discard(req)
				return nil, err
			}
			return rt.RoundTrip(req)
		case Drop:
			discard(req)
			return nil, &Error{Kind: Drop, Call: call, Err: reset()}
		default:
			discard(req)
			return kubeError(req, call, rule.Kind), nil
		}
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// kubeError is the API server's answer for kind: 429 with Retry-After as API Priority and Fairness
// rejects a request, or 500.
func kubeError(req *http.Request, call Call, kind Kind) *http.Response {
	st := metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
		Message: fmt.Sprintf("%s: %s on %s %s", Marker, kind, call.Operation, call.Resource)}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	if kind == Throttle {
		st.Reason, st.Code = metav1.StatusReasonTooManyRequests, http.StatusTooManyRequests
		st.Details = &metav1.StatusDetails{RetryAfterSeconds: 1}
		h.Set("Retry-After", "1")
	} else {
		st.Reason, st.Code = metav1.StatusReasonInternalError, http.StatusInternalServerError
	}
	body, _ := json.Marshal(st)
	return respond(req, int(st.Code), h, body)
}

// kubeRequest is the request's verb and resource (with its subresource: "pods/eviction").
func kubeRequest(req *http.Request) (verb, resource string) {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return strings.ToLower(req.Method), ""
	}
	if len(parts) >= 3 && parts[0] == "namespaces" {
		parts = parts[2:]
	}
	name := ""
	if len(parts) > 0 {
		resource = parts[0]
	}
	if len(parts) > 1 {
		name = parts[1]
	}
	if len(parts) > 2 {
		resource += "/" + parts[2]
	}
	switch req.Method {
	case http.MethodGet:
		switch {
		case req.URL.Query().Get("watch") == "true" || req.URL.Query().Get("watch") == "1":
			verb = "watch"
		case name == "":
			verb = "list"
		default:
			verb = "get"
		}
	case http.MethodPost:
		verb = "create"
	case http.MethodPut:
		verb = "update"
	case http.MethodPatch:
		verb = "patch"
	case http.MethodDelete:
		verb = "delete"
		if name == "" {
			verb = "deletecollection"
		}
	default:
		verb = strings.ToLower(req.Method)
	}
	return verb, resource
}
