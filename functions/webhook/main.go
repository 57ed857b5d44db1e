// Command webhook is the Lambda behind the pending-pod admission webhook's Function URL.
//
// Environment: NODEWRIGHT_CLUSTER_NAME, NODEWRIGHT_PROVISIONING_QUEUE_URL, NODEWRIGHT_WEBHOOK_TOKEN (the
// secret last path segment of the webhook URL).
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/nodewright/nodewright/shared/podwebhook"
)

func main() {
	log := lambdacontext.NewLogger()
	env := map[string]string{}
	for _, k := range []string{"NODEWRIGHT_CLUSTER_NAME", "NODEWRIGHT_PROVISIONING_QUEUE_URL", "NODEWRIGHT_WEBHOOK_TOKEN"} {
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
	intake := &podwebhook.Intake{
		Cluster:  env["NODEWRIGHT_CLUSTER_NAME"],
		QueueURL: env["NODEWRIGHT_PROVISIONING_QUEUE_URL"],
		Token:    env["NODEWRIGHT_WEBHOOK_TOKEN"],
		Queue:    sqs.NewFromConfig(cfg),
		Log:      log,
		Now:      time.Now,
	}
	lambda.Start(handler(intake))
}
