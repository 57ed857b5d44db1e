package main

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"
)

// everyMinute invokes fn once a minute. A tick that cannot start within a minute (every execution its
// reserved concurrency allows is busy) is dropped, not queued: the next tick does the same work.
func everyMinute(fn *GoFunction, description string) awsevents.Rule {
	fn.Function.ConfigureAsyncInvoke(&awslambda.EventInvokeConfigOptions{
		MaxEventAge: awscdk.Duration_Minutes(jsii.Number(1)), RetryAttempts: jsii.Number(0),
	})
	return awsevents.NewRule(fn.Construct, jsii.String("EveryMinute"), &awsevents.RuleProps{
		Description: jsii.String(description),
		Schedule:    awsevents.Schedule_Rate(awscdk.Duration_Minutes(jsii.Number(1))),
		Targets: &[]awsevents.IRuleTarget{awseventstargets.NewLambdaFunction(fn.Function, &awseventstargets.LambdaFunctionProps{
			MaxEventAge: awscdk.Duration_Minutes(jsii.Number(1)), RetryAttempts: jsii.Number(0),
		})},
	})
}

// queueTrigger configures an SQS event source; partial batch failures are always reported.
type queueTrigger struct {
	batchSize float64
	window    awscdk.Duration // nil: none (FIFO queues do not allow one)
	// pollers is the event source's maximum concurrency (0: Lambda's default scaling). It must not exceed
	// the function's reserved concurrency.
	pollers float64
}

// consume makes queue an event source of fn. A queue whose visibility timeout is shorter than the
// function's timeout (Lambda refuses the mapping) is a synth error, and so is a function with reserved
// concurrency whose event source may poll more batches than it can run: the throttled batches would count
// receives and end in the dead-letter queue.
func consume(fn *GoFunction, queue awssqs.Queue, t queueTrigger, fnTimeout awscdk.Duration) {
	if cfn, ok := queue.Node().DefaultChild().(awssqs.CfnQueue); ok {
		visibility := cfn.VisibilityTimeout()
		if visibility == nil || *visibility < *fnTimeout.ToSeconds(nil) {
			awscdk.Annotations_Of(fn.Construct).AddError(jsii.String(fmt.Sprintf(
				"queue %s: visibility timeout must be at least the consuming function's timeout (%gs)",
				*queue.Node().Id(), *fnTimeout.ToSeconds(nil))))
		}
	}
	if fn.Reserved > 0 && (t.pollers == 0 || t.pollers > fn.Reserved) {
		awscdk.Annotations_Of(fn.Construct).AddError(jsii.String(fmt.Sprintf(
			"queue %s: the event source may poll more batches at once than the function's reserved concurrency (%g) runs",
			*queue.Node().Id(), fn.Reserved)))
	}
	var pollers *float64
	if t.pollers > 0 {
		pollers = jsii.Number(t.pollers)
	}
	fn.Function.AddEventSource(awslambdaeventsources.NewSqsEventSource(queue, &awslambdaeventsources.SqsEventSourceProps{
		BatchSize:               jsii.Number(t.batchSize),
		MaxConcurrency:          pollers,
		MaxBatchingWindow:       t.window,
		ReportBatchItemFailures: jsii.Bool(true),
	}))
}
