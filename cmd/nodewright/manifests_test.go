package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/yaml"
)

func TestManifestsPrintsTheFootprint(t *testing.T) {
	var out, errOut bytes.Buffer
	code := dispatch([]string{"manifests", "--webhook-url", "https://abc.lambda-url.us-east-1.on.aws/webhook/tok"}, strings.NewReader(""), &out, &errOut)
	require.Equal(t, 0, code, errOut.String())
	docs := strings.Split(out.String(), "\n---\n")
	require.Len(t, docs, 3)
	assert.Contains(t, docs[0], "kind: ClusterRole\n")
	assert.Contains(t, docs[1], "kind: ClusterRoleBinding\n")
	var vwc admissionregistrationv1.ValidatingWebhookConfiguration
	require.NoError(t, yaml.UnmarshalStrict([]byte(docs[2]), &vwc))
	require.Len(t, vwc.Webhooks, 1)
	w := vwc.Webhooks[0]
	assert.Equal(t, "https://abc.lambda-url.us-east-1.on.aws/webhook/tok", *w.ClientConfig.URL)
	assert.Equal(t, admissionregistrationv1.Ignore, *w.FailurePolicy)
	assert.Equal(t, []string{"pods/status"}, w.Rules[0].Resources)
	assert.Len(t, w.MatchConditions, 2)

	assert.Equal(t, 1, dispatch([]string{"manifests", "--webhook-url", "http://insecure/webhook/tok"}, strings.NewReader(""), &out, &errOut))
	assert.Contains(t, errOut.String(), "must be an https URL")
	assert.Equal(t, 2, dispatch([]string{"manifests"}, strings.NewReader(""), &out, &errOut))
}
