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
	"k8s.io/apimachinery/pkg/api/resource"
)

func readSample(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "events", name))
	require.NoError(t, err)
	return data
}

func TestDecodePodReviewOfAnUnschedulablePod(t *testing.T) {
	review, err := DecodePodReview(bytes.NewReader(readSample(t, "admission-pod-unschedulable.json")), 0)
	require.NoError(t, err)

	assert.Equal(t, "6b7c1d2e-4f3a-4e8b-9c1d-0a2b3c4d5e6f", string(review.UID))
	assert.Equal(t, admissionv1.Update, review.Operation)
	assert.Equal(t, "status", review.SubResource)
	pod := review.Pod
	assert.Equal(t, "default", pod.Namespace)
	assert.Equal(t, "inflate-6d8b9c7f5-x2k9p", pod.Name)
	assert.Equal(t, "0f9e8d7c-6b5a-4c3d-8e2f-1a0b9c8d7e6f", string(pod.UID))
	assert.Empty(t, pod.Spec.NodeName)
	assert.Equal(t, "spot", pod.Spec.NodeSelector["karpenter.sh/capacity-type"])
	assert.True(t, resource.MustParse("1").Equal(pod.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU]))
	require.Len(t, pod.Status.Conditions, 1)
	cond := pod.Status.Conditions[0]
	assert.Equal(t, corev1.PodScheduled, cond.Type)
	assert.Equal(t, corev1.ConditionFalse, cond.Status)
	assert.Equal(t, corev1.PodReasonUnschedulable, cond.Reason)
}

func TestDecodePodReviewRejectsMalformedBodies(t *testing.T) {
	sample := readSample(t, "admission-pod-unschedulable.json")
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
		{name: "not a pod", body: edit(func(m map[string]any) {
			request(m)["kind"] = map[string]any{"group": "apps", "version": "v1", "kind": "Deployment"}
		}), want: "field request.kind"},
		{name: "no object", body: edit(func(m map[string]any) { delete(request(m), "object") }), want: "field request.object is missing"},
		{name: "null object", body: edit(func(m map[string]any) { request(m)["object"] = nil }), want: "field request.object is missing"},
		{name: "object of the wrong kind", body: edit(func(m map[string]any) {
			request(m)["object"].(map[string]any)["kind"] = "Node"
		}), want: "field request.object is apiVersion"},
		{name: "object with a bad field", body: edit(func(m map[string]any) {
			request(m)["object"].(map[string]any)["spec"] = "oops"
		}), want: "field request.object is not a pod"},
		{name: "object without a name", body: edit(func(m map[string]any) {
			delete(request(m)["object"].(map[string]any)["metadata"].(map[string]any), "name")
		}), want: "field request.object.metadata.name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			review, err := DecodePodReview(strings.NewReader(c.body), c.limit)
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
