package main

import (
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/webhooktoken"
	"github.com/nodewright/nodewright/shared/flows/podwebhook"
)

func TestWebhook(t *testing.T) {
	template, _ := synth(t)
	functions := template.FindResources(jsii.String("AWS::Lambda::Function"), nil)
	var webhook map[string]interface{}
	for id, f := range *functions {
		if strings.HasPrefix(id, "WebhookHandler") {
			webhook = (*f)["Properties"].(map[string]interface{})
		}
	}
	require.NotNil(t, webhook, "the webhook function keeps its construct id (Webhook…)")

	t.Run("the token is not in the function's environment, only its secret's ARN", func(t *testing.T) {
		vars := webhook["Environment"].(map[string]interface{})["Variables"].(map[string]interface{})
		assert.NotContains(t, vars, "NODEWRIGHT_WEBHOOK_TOKEN")
		secretRef, ok := vars["NODEWRIGHT_WEBHOOK_TOKEN_SECRET_ARN"].(map[string]interface{})
		require.True(t, ok, "the secret's ARN is passed: %v", vars)
		ref, _ := secretRef["Ref"].(string)
		assert.True(t, strings.HasPrefix(ref, "WebhookToken"), "a Ref to the token secret (its ARN), got %v", secretRef)
		body := jsonString(t, webhook)
		assert.NotContains(t, body, "resolve:secretsmanager", "no dynamic reference resolves the value into the function")
		assert.NotContains(t, body, "SecretString")
	})

	t.Run("reserved concurrency caps the webhook above a burst's call rate", func(t *testing.T) {
		assert.EqualValues(t, WebhookReservedConcurrency, webhook["ReservedConcurrentExecutions"])
		// kube-scheduler's event client sustains 50 requests/s; at the handler's worst-case latency (its
		// whole answer budget spent) those must fit without a throttle.
		worst := podwebhook.AnswerBudget
		assert.Less(t, webhooktoken.DefaultFetchTimeout, worst, "the token check leaves the enqueue part of the budget")
		assert.GreaterOrEqual(t, float64(WebhookReservedConcurrency), 50*worst.Seconds())
		assert.Less(t, worst, time.Second, "the handler's bound leaves room inside the API server's 1 s")
	})

	t.Run("the role reads only its token secret, with an explicit version stage", func(t *testing.T) {
		policies := template.FindResources(jsii.String("AWS::IAM::Policy"), nil)
		var statements []interface{}
		for id, p := range *policies {
			if strings.HasPrefix(id, "WebhookHandlerRole") {
				doc := (*p)["Properties"].(map[string]interface{})["PolicyDocument"].(map[string]interface{})
				statements = append(statements, doc["Statement"].([]interface{})...)
			}
		}
		var reads []map[string]interface{}
		for _, s := range statements {
			st := s.(map[string]interface{})
			if strings.Contains(jsonString(t, st["Action"]), "secretsmanager:") {
				reads = append(reads, st)
			}
		}
		require.Len(t, reads, 1)
		assert.Equal(t, "secretsmanager:GetSecretValue", reads[0]["Action"], "no DescribeSecret or other action")
		ref, _ := reads[0]["Resource"].(map[string]interface{})["Ref"].(string)
		assert.True(t, strings.HasPrefix(ref, "WebhookToken"), "only the token secret, got %v", reads[0]["Resource"])
		assert.Equal(t, map[string]interface{}{"StringEquals": map[string]interface{}{
			"secretsmanager:VersionStage": []interface{}{"AWSCURRENT", "AWSPREVIOUS"}}}, reads[0]["Condition"])
	})

	t.Run("the SMG4 suppression describes the rotation the function supports", func(t *testing.T) {
		secrets := template.FindResources(jsii.String("AWS::SecretsManager::Secret"), nil)
		require.Len(t, *secrets, 1)
		for _, s := range *secrets {
			reason := jsonString(t, (*s)["Metadata"])
			assert.Contains(t, reason, "AWSPREVIOUS")
			assert.Contains(t, reason, "nodewright manifests")
		}
	})
}

// TestNoWebhookWhenItCannotBeReached: with pendingPodWebhook=false (a region without Function URLs, or a
// cluster whose control-plane egress cannot reach one) the stack has no webhook function, URL, token or
// outputs, and the rest is deployed as before: pending pods are found by the one-minute backstop.
func TestNoWebhookWhenItCannotBeReached(t *testing.T) {
	template, annotations := synthWith(t, map[string]interface{}{"pendingPodWebhook": "false"})
	template.ResourceCountIs(jsii.String("AWS::Lambda::Url"), jsii.Number(0))
	for id := range *template.FindResources(jsii.String("AWS::Lambda::Function"), nil) {
		assert.False(t, strings.HasPrefix(id, "WebhookHandler"), id)
	}
	for id := range *template.FindResources(jsii.String("AWS::SecretsManager::Secret"), nil) {
		assert.False(t, strings.HasPrefix(id, "WebhookToken"), id)
	}
	outputs := template.FindOutputs(jsii.String("*"), nil)
	assert.NotContains(t, *outputs, "WebhookFunctionUrl")
	assert.Contains(t, *outputs, "ProvisioningQueueUrl")
	template.HasResourceProperties(jsii.String("AWS::Events::Rule"), map[string]interface{}{"ScheduleExpression": "rate(1 minute)"})
	errs := annotations.FindError(jsii.String("*"), assertions.Match_StringLikeRegexp(jsii.String("AwsSolutions-.*")))
	assert.Empty(t, *errs, "cdk-nag stays clean")

	_, err := stackPropsFromContext(awscdk.NewApp(&awscdk.AppProps{Context: &map[string]interface{}{
		"clusterName": "unit", "manifests": "manifests", "functionsDir": fakeFunctions(t), "pendingPodWebhook": "no"}}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "pendingPodWebhook")
}
