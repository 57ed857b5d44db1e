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

// everyMinute invokes fn once a minute. A tick that cannot start within a minute (the function is busy
// and has reserved concurrency 1) is dropped, not queued: the next tick does the same work.
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
}

// consume makes queue an event source of fn. A queue whose visibility timeout is shorter than the
// function's timeout (Lambda refuses the mapping) is a synth error.
func consume(fn *GoFunction, queue awssqs.Queue, t queueTrigger, fnTimeout awscdk.Duration) {
	if cfn, ok := queue.Node().DefaultChild().(awssqs.CfnQueue); ok {
		visibility := cfn.VisibilityTimeout()
		if visibility == nil || *visibility < *fnTimeout.ToSeconds(nil) {
			awscdk.Annotations_Of(fn.Construct).AddError(jsii.String(fmt.Sprintf(
				"queue %s: visibility timeout must be at least the consuming function's timeout (%gs)",
				*queue.Node().Id(), *fnTimeout.ToSeconds(nil))))
		}
	}
	fn.Function.AddEventSource(awslambdaeventsources.NewSqsEventSource(queue, &awslambdaeventsources.SqsEventSourceProps{
		BatchSize:               jsii.Number(t.batchSize),
		MaxBatchingWindow:       t.window,
		ReportBatchItemFailures: jsii.Bool(true),
	}))
}
