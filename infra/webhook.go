package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
)

// Webhook is the pending-pod admission webhook: a function behind a Function URL whose last path segment
// is a generated secret token.
type Webhook struct {
	constructs.Construct
	Function *GoFunction
	URL      awslambda.FunctionUrl
	Token    awssecretsmanager.Secret
}

// NewWebhook creates the webhook function, allowed only to send to the provisioning queue.
func NewWebhook(scope constructs.Construct, id, cluster, functionsDir string, provisioning awssqs.IQueue) *Webhook {
	c := constructs.NewConstruct(scope, jsii.String(id))
	token := awssecretsmanager.NewSecret(c, jsii.String("Token"), &awssecretsmanager.SecretProps{
		Description: jsii.String("Secret path segment of the Nodewright pending-pod webhook URL"),
		GenerateSecretString: &awssecretsmanager.SecretStringGenerator{
			PasswordLength: jsii.Number(40), ExcludePunctuation: jsii.Bool(true), IncludeSpace: jsii.Bool(false),
		},
	})
	cdknag.NagSuppressions_AddResourceSuppressions(token, &[]*cdknag.NagPackSuppression{{
		Id: jsii.String("AwsSolutions-SMG4"),
		Reason: jsii.String("The token is part of the webhook URL registered in the cluster's ValidatingWebhookConfiguration; " +
			"rotating it without re-registering would break the webhook. Rotate by updating the secret and re-applying " +
			"`nodewright manifests`; the API server's failurePolicy Ignore keeps pods flowing meanwhile."),
	}}, jsii.Bool(false))
	fn := NewGoFunction(c, "Handler", GoFunctionProps{
		Name: "webhook", FunctionsDir: functionsDir, Timeout: awscdk.Duration_Seconds(jsii.Number(5)), MemoryMB: 256,
		Environment: map[string]*string{
			"NODEWRIGHT_CLUSTER_NAME":           jsii.String(cluster),
			"NODEWRIGHT_PROVISIONING_QUEUE_URL": provisioning.QueueUrl(),
			// Resolved by CloudFormation at deploy time; the template holds only the reference.
			"NODEWRIGHT_WEBHOOK_TOKEN": token.SecretValue().UnsafeUnwrap(),
		},
	})
	provisioning.GrantSendMessages(fn.Function)
	url := fn.Function.AddFunctionUrl(&awslambda.FunctionUrlOptions{
		// The API server cannot sign requests; the secret path token authenticates them.
		AuthType: awslambda.FunctionUrlAuthType_NONE,
	})
	return &Webhook{Construct: c, Function: fn, URL: url, Token: token}
}
