package kube

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
)

func readSample(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "events", name))
	require.NoError(t, err)
	return data
}

func TestDecodeEventReviewOfAFailedSchedulingEvent(t *testing.T) {
	review, err := DecodeEventReview(bytes.NewReader(readSample(t, "admission-event-failedscheduling.json")), 0)
	require.NoError(t, err)

	assert.Equal(t, "6b7c1d2e-4f3a-4e8b-9c1d-0a2b3c4d5e6f", string(review.UID))
	assert.Equal(t, admissionv1.Create, review.Operation)
	assert.False(t, review.DryRun)
	assert.Equal(t, "FailedScheduling", review.Reason)
	assert.Equal(t, corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: "default", Name: "inflate-6d8b9c7f5-x2k9p",
		UID: "0f9e8d7c-6b5a-4c3d-8e2f-1a0b9c8d7e6f", ResourceVersion: "482913"}, review.Regarding)
}

// TestDecodeEventReviewOfACoreEvent reads the same Event written through the core v1 API, where the pod
// is the involvedObject.
func TestDecodeEventReviewOfACoreEvent(t *testing.T) {
	var m map[string]any
	require.NoError(t, json.Unmarshal(readSample(t, "admission-event-failedscheduling.json"), &m))
	req := m["request"].(map[string]any)
	req["kind"] = map[string]any{"group": "", "version": "v1", "kind": "Event"}
	obj := req["object"].(map[string]any)
	obj["apiVersion"], obj["involvedObject"], obj["message"] = "v1", obj["regarding"], obj["note"]
	delete(obj, "regarding")
	delete(obj, "note")
	for _, k := range []string{"eventTime", "deprecatedSource", "deprecatedFirstTimestamp", "deprecatedLastTimestamp"} {
		delete(obj, k)
	}
	body, err := json.Marshal(m)
	require.NoError(t, err)

	review, err := DecodeEventReview(bytes.NewReader(body), 0)
	require.NoError(t, err)
	assert.Equal(t, "FailedScheduling", review.Reason)
	assert.Equal(t, "inflate-6d8b9c7f5-x2k9p", review.Regarding.Name)
	assert.Equal(t, "0f9e8d7c-6b5a-4c3d-8e2f-1a0b9c8d7e6f", string(review.Regarding.UID))
}

func TestDecodeEventReviewRejectsMalformedBodies(t *testing.T) {
	sample := readSample(t, "admission-event-failedscheduling.json")
	edit := func(change func(m map[string]any)) string {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sample, &m))
		change(m)
		out, err := json.Marshal(m)
		require.NoError(t, err)
		return string(out)
	}
	request := func(m map[string]any) map[string]any { return m["request"].(map[string]any) }
	cases := []struct {
		name, body string
		limit      int64
		want       string
	}{
		{name: "empty", body: "  ", want: "the body is empty"},
		{name: "not JSON", body: "<xml/>", want: "not an AdmissionReview"},
		{name: "JSON array", body: "[]", want: "not an AdmissionReview"},
		{name: "too large", body: string(sample), limit: 100, want: "larger than 100 bytes"},
		{name: "v1beta1", body: edit(func(m map[string]any) { m["apiVersion"] = "admission.k8s.io/v1beta1" }),
			want: `field apiVersion is "admission.k8s.io/v1beta1"`},
		{name: "no apiVersion", body: edit(func(m map[string]any) { delete(m, "apiVersion") }), want: "field apiVersion"},
		{name: "wrong kind", body: edit(func(m map[string]any) { m["kind"] = "ConversionReview" }), want: "field kind"},
		{name: "no request", body: edit(func(m map[string]any) { delete(m, "request") }), want: "field request is missing"},
		{name: "no uid", body: edit(func(m map[string]any) { delete(request(m), "uid") }), want: "field request.uid"},
		{name: "not an Event", body: edit(func(m map[string]any) {
			request(m)["kind"] = map[string]any{"group": "", "version": "v1", "kind": "Pod"}
		}), want: "field request.kind"},
		{name: "an Event of another group", body: edit(func(m map[string]any) {
			request(m)["kind"] = map[string]any{"group": "example.com", "version": "v1", "kind": "Event"}
		}), want: "field request.kind"},
		{name: "no object", body: edit(func(m map[string]any) { delete(request(m), "object") }), want: "field request.object is missing"},
		{name: "null object", body: edit(func(m map[string]any) { request(m)["object"] = nil }), want: "field request.object is missing"},
		{name: "object of the wrong kind", body: edit(func(m map[string]any) {
			request(m)["object"].(map[string]any)["kind"] = "Node"
		}), want: "field request.object is apiVersion"},
		{name: "object with a bad field", body: edit(func(m map[string]any) {
			request(m)["object"].(map[string]any)["regarding"] = "oops"
		}), want: "field request.object is not an Event"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			review, err := DecodeEventReview(strings.NewReader(c.body), c.limit)
			require.Error(t, err)
			assert.Nil(t, review)
			assert.True(t, IsMalformedReview(err), "%v", err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

func TestAllowedResponseEchoesTheUID(t *testing.T) {
	out, err := AllowedResponse("6b7c1d2e-4f3a-4e8b-9c1d-0a2b3c4d5e6f")
	require.NoError(t, err)
	assert.JSONEq(t, `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",
		"response":{"uid":"6b7c1d2e-4f3a-4e8b-9c1d-0a2b3c4d5e6f","allowed":true}}`, string(out))

	_, err = AllowedResponse("")
	assert.True(t, IsMalformedReview(err))
}
