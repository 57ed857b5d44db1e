package kube

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// MaxAdmissionReviewBytes bounds an AdmissionReview body: a pod object and its old version fit easily
// (etcd caps one object at 1.5 MiB), and it stays under Lambda's 6 MB payload limit.
const MaxAdmissionReviewBytes = 6 << 20

const admissionAPIVersion = "admission.k8s.io/v1"

// PodReview is the part of an AdmissionReview request the webhook needs.
type PodReview struct {
	UID         types.UID
	Operation   admissionv1.Operation
	SubResource string
	// DryRun is set when the request will not be persisted; a webhook declaring sideEffects
	// NoneOnDryRun must then do nothing outside the answer.
	DryRun bool
	// Pod is request.object: the pod as it will be stored.
	Pod *corev1.Pod
}

// DecodePodReview reads an admission.k8s.io/v1 AdmissionReview request about a pod from body (at most
// limit bytes; 0 means MaxAdmissionReviewBytes). Every rejection wraps ErrMalformedReview and names the
// field at fault.
func DecodePodReview(body io.Reader, limit int64) (*PodReview, error) {
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
	if req.Kind.Group != "" || req.Kind.Version != "v1" || req.Kind.Kind != "Pod" {
		return nil, malformed("field request.kind is %q, want core/v1 Pod", req.Kind.String())
	}
	if len(bytes.TrimSpace(req.Object.Raw)) == 0 || bytes.Equal(bytes.TrimSpace(req.Object.Raw), []byte("null")) {
		return nil, malformed("field request.object is missing")
	}
	var pod corev1.Pod
	if err := json.Unmarshal(req.Object.Raw, &pod); err != nil {
		return nil, malformed("field request.object is not a pod: %v", err)
	}
	if pod.APIVersion != "v1" || pod.Kind != "Pod" {
		return nil, malformed("field request.object is apiVersion %q kind %q, want v1 Pod", pod.APIVersion, pod.Kind)
	}
	if pod.Name == "" {
		return nil, malformed("field request.object.metadata.name is empty")
	}
	return &PodReview{UID: req.UID, Operation: req.Operation, SubResource: req.SubResource,
		DryRun: req.DryRun != nil && *req.DryRun, Pod: &pod}, nil
}

// AllowedResponse encodes the AdmissionReview response that allows the request with the given uid. The
// webhook always allows: it only observes pods, and failing a pod's status update would hurt the cluster.
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
