package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
)

// Queues are the work queues of DESIGN.md's flows (and the disruption function's wake queue), each with its
// dead-letter queue.
type Queues struct {
	constructs.Construct
	// Provisioning is FIFO for its deduplication of repeated wake-ups; each pod's wake-ups and each
	// disrupted claim's replacement request have their own message group (shared/adapters/provisioningqueue), so an
	// urgent request never waits behind wake-ups or a batch whose invocation crashed. The provisioner's
	// lease, not the queue, keeps one run at a time.
	Provisioning awssqs.Queue
	// Interruption receives EventBridge's EC2 and Health events.
	Interruption awssqs.Queue
	// Termination drives node drains; the handler re-sends with a delay until a drain is done.
	Termination awssqs.Queue
	// DisruptionWake wakes the disruption function when a drain finishes, so a scale-in does not wait a
	// minute per step; its messages carry nothing the run needs.
	DisruptionWake awssqs.Queue
	// DeadLetter maps each work queue's name to its dead-letter queue.
	DeadLetter map[string]awssqs.Queue
}

// queueSpec describes one work queue.
type queueSpec struct {
	id              string
	fifo            bool
	maxReceiveCount float64
	// visibility must cover the consuming function's timeout (with margin) once functions exist.
	visibility awscdk.Duration
	retention  awscdk.Duration
}

// NewQueues creates the work queues and their dead-letter queues: SSE with SQS-managed keys, a policy
// that denies any request not made over TLS, and dead-letter queues kept for 14 days and retained when
// the stack is deleted (they hold the evidence of what failed).
func NewQueues(scope constructs.Construct, id string) *Queues {
	c := constructs.NewConstruct(scope, jsii.String(id))
	q := &Queues{Construct: c, DeadLetter: map[string]awssqs.Queue{}}
	specs := []queueSpec{
		{id: "Provisioning", fifo: true, maxReceiveCount: 5, visibility: awscdk.Duration_Minutes(jsii.Number(6)), retention: awscdk.Duration_Days(jsii.Number(1))},
		{id: "Interruption", maxReceiveCount: 5, visibility: awscdk.Duration_Minutes(jsii.Number(2)), retention: awscdk.Duration_Days(jsii.Number(4))},
		{id: "Termination", maxReceiveCount: 20, visibility: awscdk.Duration_Minutes(jsii.Number(6)), retention: awscdk.Duration_Days(jsii.Number(4))},
		{id: "DisruptionWake", maxReceiveCount: 5, visibility: awscdk.Duration_Minutes(jsii.Number(18)), retention: awscdk.Duration_Days(jsii.Number(1))},
	}
	made := map[string]awssqs.Queue{}
	for _, s := range specs {
		dlq := awssqs.NewQueue(c, jsii.String(s.id+"DeadLetter"), &awssqs.QueueProps{
			Fifo:            jsii.Bool(s.fifo),
			Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
			EnforceSSL:      jsii.Bool(true),
			RetentionPeriod: awscdk.Duration_Days(jsii.Number(14)),
			RemovalPolicy:   awscdk.RemovalPolicy_RETAIN,
		})
		cdknag.NagSuppressions_AddResourceSuppressions(dlq, &[]*cdknag.NagPackSuppression{{
			Id:     jsii.String("AwsSolutions-SQS3"),
			Reason: jsii.String("This queue is itself the dead-letter queue of the " + s.id + " queue; a DLQ of a DLQ would only move the same messages again."),
		}}, jsii.Bool(false))
		queue := awssqs.NewQueue(c, jsii.String(s.id), &awssqs.QueueProps{
			Fifo:              jsii.Bool(s.fifo),
			Encryption:        awssqs.QueueEncryption_SQS_MANAGED,
			EnforceSSL:        jsii.Bool(true),
			VisibilityTimeout: s.visibility,
			RetentionPeriod:   s.retention,
			DeadLetterQueue:   &awssqs.DeadLetterQueue{Queue: dlq, MaxReceiveCount: jsii.Number(s.maxReceiveCount)},
		})
		made[s.id] = queue
		q.DeadLetter[s.id] = dlq
	}
	q.Provisioning, q.Interruption, q.Termination = made["Provisioning"], made["Interruption"], made["Termination"]
	q.DisruptionWake = made["DisruptionWake"]
	return q
}
