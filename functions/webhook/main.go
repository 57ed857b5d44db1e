// Command webhook is the Lambda behind the pending-pod admission webhook's Function URL.
//
// Environment: NODEWRIGHT_CLUSTER_NAME, NODEWRIGHT_PROVISIONING_QUEUE_URL, NODEWRIGHT_WEBHOOK_TOKEN_SECRET_ARN
// (the Secrets Manager secret holding the URL's last path segment; the token itself is never in the
// environment — it is read, cached and followed through rotations by shared/adapters/webhooktoken).
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/nodewright/nodewright/shared/adapters/webhooktoken"
	"github.com/nodewright/nodewright/shared/flows/podwebhook"
	"github.com/nodewright/nodewright/shared/flows/runmetrics"
)

func main() {
	log := lambdacontext.NewLogger()
	env := map[string]string{}
	for _, k := range []string{"NODEWRIGHT_CLUSTER_NAME", "NODEWRIGHT_PROVISIONING_QUEUE_URL", "NODEWRIGHT_WEBHOOK_TOKEN_SECRET_ARN"} {
		if env[k] = os.Getenv(k); env[k] == "" {
			fmt.Fprintf(os.Stderr, "webhook: %s is not set\n", k)
			os.Exit(1)
		}
	}
	cfg, err := awsconfig.LoadDefaultConfig(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, "webhook: loading AWS configuration:", err)
		os.Exit(1)
	}
	// Read lazily, by the first request, within webhooktoken.DefaultFetchTimeout: a Secrets Manager that
	// does not answer at a cold start means 401s (the API server lets pods through), never a crash.
	tokens, err := webhooktoken.New(secretsmanager.NewFromConfig(cfg), webhooktoken.Options{
		SecretID: env["NODEWRIGHT_WEBHOOK_TOKEN_SECRET_ARN"], Log: log})
	if err != nil {
		fmt.Fprintln(os.Stderr, "webhook:", err)
		os.Exit(1)
	}
	intake := &podwebhook.Intake{
		Cluster:  env["NODEWRIGHT_CLUSTER_NAME"],
		QueueURL: env["NODEWRIGHT_PROVISIONING_QUEUE_URL"],
		Tokens:   tokens,
		Queue:    sqs.NewFromConfig(cfg),
		Log:      log,
		Now:      time.Now,
	}
	cluster := env["NODEWRIGHT_CLUSTER_NAME"]
	lambda.Start(handler(intake, func(result string, took time.Duration) {
		if err := runmetrics.Webhook(os.Stdout, cluster, result, took, time.Now()); err != nil {
			log.Error("writing webhook metrics", "error", err.Error())
		}
	}))
}
