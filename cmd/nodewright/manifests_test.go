package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/nodewright/nodewright/shared/adapters/footprint"
)

func TestManifestsPrintsTheFootprint(t *testing.T) {
	var out, errOut bytes.Buffer
	code := dispatch([]string{"manifests", "--webhook-url", "https://abc.lambda-url.us-east-1.on.aws/webhook/tok"}, strings.NewReader(""), &out, &errOut)
	require.Equal(t, 0, code, errOut.String())
	docs := strings.Split(out.String(), "\n---\n")
	// The three mirror CRDs and the policy and binding that keep them read-only, then a role and a binding
	// per function, each binding only that function's group, then the webhook.
	mirrors := len(footprint.Mirrors())
	require.Equal(t, 5, mirrors)
	for i, name := range []string{"nodeclaims.nodewright.sh", "nodepools.nodewright.sh", "ec2nodeclasses.nodewright.sh"} {
		assert.Contains(t, docs[i], "kind: CustomResourceDefinition\n", "document %d", i)
		assert.Contains(t, docs[i], "name: "+name+"\n", "document %d", i)
		assert.Contains(t, docs[i], "scope: Cluster\n", "document %d", i)
	}
	var policy admissionregistrationv1.ValidatingAdmissionPolicy
	require.NoError(t, yaml.UnmarshalStrict([]byte(docs[3]), &policy))
	assert.Equal(t, footprint.MirrorPolicyName, policy.Name)
	var binding admissionregistrationv1.ValidatingAdmissionPolicyBinding
	require.NoError(t, yaml.UnmarshalStrict([]byte(docs[4]), &binding))
	assert.Equal(t, policy.Name, binding.Spec.PolicyName)
	docs = docs[mirrors:]
	functions := footprint.Functions()
	require.Len(t, docs, 2*len(functions)+1)
	for i, f := range functions {
		var role rbacv1.ClusterRole
		require.NoError(t, yaml.UnmarshalStrict([]byte(docs[2*i]), &role))
		assert.Equal(t, "ClusterRole", role.Kind)
		assert.Equal(t, "nodewright-"+string(f), role.Name)
		var binding rbacv1.ClusterRoleBinding
		require.NoError(t, yaml.UnmarshalStrict([]byte(docs[2*i+1]), &binding))
		assert.Equal(t, "ClusterRoleBinding", binding.Kind)
		assert.Equal(t, role.Name, binding.RoleRef.Name)
		require.Len(t, binding.Subjects, 1)
		assert.Equal(t, "nodewright:"+string(f), binding.Subjects[0].Name)
	}
	var vwc admissionregistrationv1.ValidatingWebhookConfiguration
	require.NoError(t, yaml.UnmarshalStrict([]byte(docs[len(docs)-1]), &vwc))
	require.Len(t, vwc.Webhooks, 1)
	w := vwc.Webhooks[0]
	assert.Equal(t, "https://abc.lambda-url.us-east-1.on.aws/webhook/tok", *w.ClientConfig.URL)
	assert.Equal(t, admissionregistrationv1.Ignore, *w.FailurePolicy)
	assert.Equal(t, []string{"events"}, w.Rules[0].Resources)
	assert.Equal(t, []admissionregistrationv1.OperationType{admissionregistrationv1.Create}, w.Rules[0].Operations)
	assert.EqualValues(t, 1, *w.TimeoutSeconds)
	require.Len(t, w.MatchConditions, 1)
	assert.Contains(t, w.MatchConditions[0].Expression, `object.reason == "FailedScheduling"`)

	assert.Equal(t, 1, dispatch([]string{"manifests", "--webhook-url", "http://insecure/webhook/tok"}, strings.NewReader(""), &out, &errOut))
	assert.Contains(t, errOut.String(), "must be an https URL")
	assert.Equal(t, 2, dispatch([]string{"manifests"}, strings.NewReader(""), &out, &errOut))
	assert.Equal(t, 2, dispatch([]string{"manifests", "--no-webhook", "--webhook-url", "https://abc.lambda-url.us-east-1.on.aws/webhook/tok"},
		strings.NewReader(""), &out, &errOut), "one or the other")
}

// TestManifestsWithoutTheWebhook: a deployment with pendingPodWebhook=false (no Function URL in the region,
// or routed egress without a way out) applies the RBAC alone.
func TestManifestsWithoutTheWebhook(t *testing.T) {
	var out, errOut bytes.Buffer
	require.Equal(t, 0, dispatch([]string{"manifests", "--no-webhook"}, strings.NewReader(""), &out, &errOut), errOut.String())
	docs := strings.Split(out.String(), "\n---\n")
	require.Len(t, docs, len(footprint.Mirrors())+2*len(footprint.Functions()))
	assert.NotContains(t, out.String(), "ValidatingWebhookConfiguration")
}

// The CapacityBuffer CRD is SIG Autoscaling's: printed alone, on request, and never with the footprint.
func TestManifestsPrintTheCapacityBufferCRDOnlyOnRequest(t *testing.T) {
	var out, errOut bytes.Buffer
	require.Equal(t, 0, dispatch([]string{"manifests", "--capacity-buffer-crd"}, strings.NewReader(""), &out, &errOut), errOut.String())
	var crd map[string]any
	require.NoError(t, yaml.Unmarshal(out.Bytes(), &crd))
	assert.Equal(t, "CustomResourceDefinition", crd["kind"])
	assert.Equal(t, "capacitybuffers.autoscaling.x-k8s.io", crd["metadata"].(map[string]any)["name"])
	assert.NotContains(t, out.String(), "ClusterRole")

	out.Reset()
	require.Equal(t, 0, dispatch([]string{"manifests", "--no-webhook"}, strings.NewReader(""), &out, &errOut))
	assert.NotContains(t, out.String(), "capacitybuffers.autoscaling.x-k8s.io", "the footprint never carries it")
	assert.NotContains(t, out.String(), "group: autoscaling.x-k8s.io\n", "the footprint's CRDs are nodewright.sh's mirrors only")

	errOut.Reset()
	assert.Equal(t, 2, dispatch([]string{"manifests", "--capacity-buffer-crd", "--no-webhook"}, strings.NewReader(""), &out, &errOut))
	assert.Contains(t, errOut.String(), "--capacity-buffer-crd prints the CRD alone")
}
