package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"

	"github.com/nodewright/nodewright/shared/core/sizing"
)

// WebhookReservedConcurrency caps (and guarantees) the webhook's concurrent executions. A throttled call
// fails open and the API server logs it, so the cap sits above what a burst can ask for: kube-scheduler
// writes its FailedScheduling Events through its client's rate limit (KubeSchedulerConfiguration
// clientConnection: qps 50, burst 100), so at most ~100 calls arrive in a second and ~50/s after. Each
// call takes a few milliseconds against a healthy SQS and, when SQS hangs, at most its answer budget
// (850 ms, see shared/flows/podwebhook). 100 executions carry the whole burst, or the sustained rate at the
// worst-case latency (50/s × 0.85 s ≈ 43), without a throttle. The account needs this much concurrency
// free beyond the 100 Lambda keeps unreserved.
const WebhookReservedConcurrency = 100

// Webhook is the pending-pod admission webhook: a function behind a Function URL whose last path segment
// is a generated secret token, which the function reads from Secrets Manager (never from its environment).
type Webhook struct {
	constructs.Construct
	Function *GoFunction
	URL      awslambda.FunctionUrl
	Token    awssecretsmanager.Secret
}

// NewWebhook creates the webhook function, allowed only to send to the provisioning queue and to read the
// current and previous versions of its token, with the memory of size.
func NewWebhook(scope constructs.Construct, id, cluster, functionsDir string, size sizing.Size, provisioning awssqs.IQueue) *Webhook {
	c := constructs.NewConstruct(scope, jsii.String(id))
	token := awssecretsmanager.NewSecret(c, jsii.String("Token"), &awssecretsmanager.SecretProps{
		Description: jsii.String("Secret path segment of the Nodewright pending-pod webhook URL"),
		GenerateSecretString: &awssecretsmanager.SecretStringGenerator{
			PasswordLength: jsii.Number(40), ExcludePunctuation: jsii.Bool(true), IncludeSpace: jsii.Bool(false),
		},
	})
	cdknag.NagSuppressions_AddResourceSuppressions(token, &[]*cdknag.NagPackSuppression{{
		Id: jsii.String("AwsSolutions-SMG4"),
		Reason: jsii.String("The token is part of the webhook URL registered in the cluster's ValidatingWebhookConfiguration, " +
			"which a rotation Lambda cannot re-register. The operator rotates it (infra/README.md, 'Rotating the webhook token'): " +
			"PutSecretValue with a new token; the webhook function follows within seconds and accepts the new (AWSCURRENT) " +
			"and the old (AWSPREVIOUS) token for an hour after the new version's creation; within that hour the operator " +
			"re-applies `nodewright manifests` with the new URL."),
	}}, jsii.Bool(false))
	fn := NewGoFunction(c, "Handler", GoFunctionProps{
		Name: "webhook", FunctionsDir: functionsDir, Timeout: awscdk.Duration_Seconds(jsii.Number(5)), MemoryMB: float64(size.MemoryMB),
		ReservedConcurrency: WebhookReservedConcurrency,
		Environment: map[string]*string{
			"NODEWRIGHT_CLUSTER_NAME":             jsii.String(cluster),
			"NODEWRIGHT_PROVISIONING_QUEUE_URL":   provisioning.QueueUrl(),
			"NODEWRIGHT_WEBHOOK_TOKEN_SECRET_ARN": token.SecretArn(),
		},
	})
	provisioning.GrantSendMessages(fn.Function)
	// GetSecretValue only (grantRead would add DescribeSecret, which nothing calls), only on this secret,
	// and only with an explicit version stage the function reads. The secret is encrypted with Secrets
	// Manager's AWS managed key, which needs no KMS grant.
	fn.Role.AddToPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("secretsmanager:GetSecretValue"),
		Resources: jsii.Strings(*token.SecretArn()),
		Conditions: &map[string]interface{}{
			"StringEquals": map[string]interface{}{"secretsmanager:VersionStage": []string{"AWSCURRENT", "AWSPREVIOUS"}},
		},
	}))
	url := fn.Function.AddFunctionUrl(&awslambda.FunctionUrlOptions{
		// The API server cannot sign requests; the secret path token authenticates them.
		AuthType: awslambda.FunctionUrlAuthType_NONE,
	})
	return &Webhook{Construct: c, Function: fn, URL: url, Token: token}
}
