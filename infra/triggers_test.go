package main

import (
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"
	"github.com/stretchr/testify/assert"
)

// TestConsumeRefusesAShortVisibilityTimeout: Lambda rejects an SQS mapping whose queue hides messages for
// less time than the function may run; the synth says so first.
func TestConsumeRefusesAShortVisibilityTimeout(t *testing.T) {
	app := awscdk.NewApp(nil)
	stack := awscdk.NewStack(app, jsii.String("Short"), nil)
	fn := NewGoFunction(stack, "Fn", GoFunctionProps{Name: "termination", FunctionsDir: fakeFunctions(t),
		Timeout: awscdk.Duration_Seconds(jsii.Number(60)), MemoryMB: 128})
	queue := awssqs.NewQueue(stack, jsii.String("Q"), &awssqs.QueueProps{VisibilityTimeout: awscdk.Duration_Seconds(jsii.Number(30))})
	consume(fn, queue, queueTrigger{batchSize: 1}, awscdk.Duration_Seconds(jsii.Number(60)))
	errs := assertions.Annotations_FromStack(stack).FindError(jsii.String("*"),
		assertions.Match_StringLikeRegexp(jsii.String("queue Q: visibility timeout must be at least the consuming function's timeout \\(60s\\)")))
	assert.Len(t, *errs, 1)
}

// TestConsumeRefusesMorePollersThanReservedConcurrency: a batch Lambda throttles still counts a receive,
// so an event source that may poll more batches than its function runs would dead-letter work.
func TestConsumeRefusesMorePollersThanReservedConcurrency(t *testing.T) {
	for name, tc := range map[string]struct {
		pollers float64
		refused bool
	}{"default scaling": {0, true}, "more pollers": {4, true}, "as many": {3, false}, "fewer": {2, false}} {
		app := awscdk.NewApp(nil)
		stack := awscdk.NewStack(app, jsii.String("Pollers"), nil)
		fn := NewGoFunction(stack, "Fn", GoFunctionProps{Name: "termination", FunctionsDir: fakeFunctions(t),
			Timeout: awscdk.Duration_Seconds(jsii.Number(60)), MemoryMB: 128, ReservedConcurrency: 3})
		queue := awssqs.NewQueue(stack, jsii.String("Q"), &awssqs.QueueProps{VisibilityTimeout: awscdk.Duration_Seconds(jsii.Number(60))})
		consume(fn, queue, queueTrigger{batchSize: 1, pollers: tc.pollers}, awscdk.Duration_Seconds(jsii.Number(60)))
		errs := assertions.Annotations_FromStack(stack).FindError(jsii.String("*"),
			assertions.Match_StringLikeRegexp(jsii.String("queue Q: the event source may poll more batches at once than the function's reserved concurrency \\(3\\) runs")))
		assert.Equal(t, tc.refused, len(*errs) == 1, name)
	}
}
