package kube

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// MaxAdmissionReviewBytes bounds an AdmissionReview body: an Event (or any object: etcd caps one at
// 1.5 MiB) fits easily, and it stays under Lambda's 6 MB payload limit.
const MaxAdmissionReviewBytes = 6 << 20

const admissionAPIVersion = "admission.k8s.io/v1"

// EventReview is the part of an AdmissionReview request about an Event that the webhook needs. Both
// Event APIs are accepted: events.k8s.io/v1 (what kube-scheduler writes) and core v1.
type EventReview struct {
	UID       types.UID
	Operation admissionv1.Operation
	// DryRun is set when the request will not be persisted; a webhook declaring sideEffects
	// NoneOnDryRun must then do nothing outside the answer.
	DryRun bool
	// Reason is the Event's reason, for example "FailedScheduling".
	Reason string
	// Regarding is the object the Event is about (events.k8s.io/v1 regarding, core v1 involvedObject).
	Regarding corev1.ObjectReference
}

// DecodeEventReview reads an admission.k8s.io/v1 AdmissionReview request about an Event from body (at
// most limit bytes; 0 means MaxAdmissionReviewBytes). Every rejection wraps ErrMalformedReview and names
// the field at fault.
func DecodeEventReview(body io.Reader, limit int64) (*EventReview, error) {
	req, err := decodeReviewRequest(body, limit)
	if err != nil {
		return nil, err
	}
	if req.Kind.Version != "v1" || req.Kind.Kind != "Event" || (req.Kind.Group != "" && req.Kind.Group != eventsv1.GroupName) {
		return nil, malformed("field request.kind is %q, want an events.k8s.io/v1 or core/v1 Event", req.Kind.String())
	}
	if len(bytes.TrimSpace(req.Object.Raw)) == 0 || bytes.Equal(bytes.TrimSpace(req.Object.Raw), []byte("null")) {
		return nil, malformed("field request.object is missing")
	}
	out := &EventReview{UID: req.UID, Operation: req.Operation, DryRun: req.DryRun != nil && *req.DryRun}
	if req.Kind.Group == eventsv1.GroupName {
		var ev eventsv1.Event
		if err := json.Unmarshal(req.Object.Raw, &ev); err != nil {
			return nil, malformed("field request.object is not an Event: %v", err)
		}
		if ev.APIVersion != eventsv1.SchemeGroupVersion.String() || ev.Kind != "Event" {
			return nil, malformed("field request.object is apiVersion %q kind %q, want events.k8s.io/v1 Event", ev.APIVersion, ev.Kind)
		}
		out.Reason, out.Regarding = ev.Reason, ev.Regarding
	} else {
		var ev corev1.Event
		if err := json.Unmarshal(req.Object.Raw, &ev); err != nil {
			return nil, malformed("field request.object is not an Event: %v", err)
		}
		if ev.APIVersion != "v1" || ev.Kind != "Event" {
			return nil, malformed("field request.object is apiVersion %q kind %q, want v1 Event", ev.APIVersion, ev.Kind)
		}
		out.Reason, out.Regarding = ev.Reason, ev.InvolvedObject
	}
	return out, nil
}

// decodeReviewRequest reads the AdmissionReview envelope and returns its request.
func decodeReviewRequest(body io.Reader, limit int64) (*admissionv1.AdmissionRequest, error) {
	if limit <= 0 {
		limit = MaxAdmissionReviewBytes
	}
	data, err := io.ReadAll(io.LimitReader(body, limit+1))
	if err != nil {
		return nil, malformed("reading the body: %v", err)
	}
	if int64(len(data)) > limit {
		return nil, malformed("the body is larger than %d bytes", limit)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, malformed("the body is empty")
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(data, &review); err != nil {
		return nil, malformed("the body is not an AdmissionReview: %v", err)
	}
	if review.APIVersion != admissionAPIVersion {
		return nil, malformed("field apiVersion is %q, want %q", review.APIVersion, admissionAPIVersion)
	}
	if review.Kind != "AdmissionReview" {
		return nil, malformed("field kind is %q, want \"AdmissionReview\"", review.Kind)
	}
	req := review.Request
	if req == nil {
		return nil, malformed("field request is missing")
	}
	if req.UID == "" {
		return nil, malformed("field request.uid is empty")
	}
	return req, nil
}

// AllowedResponse encodes the AdmissionReview response that allows the request with the given uid. The
// webhook always allows: it only observes Events, and refusing one would hurt the cluster.
func AllowedResponse(uid types.UID) ([]byte, error) {
	if uid == "" {
		return nil, malformed("field response.uid would be empty")
	}
	out, err := json.Marshal(&admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: admissionAPIVersion, Kind: "AdmissionReview"},
		Response: &admissionv1.AdmissionResponse{UID: uid, Allowed: true},
	})
	if err != nil {
		return nil, fmt.Errorf("encoding the admission response: %w", err)
	}
	return out, nil
}

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformedReview, fmt.Sprintf(format, args...))
}
