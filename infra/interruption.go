package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// Interruption is the function that turns EC2 and AWS Health events (spot interruptions, rebalance
// recommendations, scheduled changes, stops and terminations) into replacement capacity and drains.
type Interruption struct {
	constructs.Construct
	Function *GoFunction
	Rules    []awsevents.Rule
}

// InterruptionQueues are the queues the interruption function reads and writes.
type InterruptionQueues struct {
	Interruption, Provisioning, Termination awssqs.Queue
	// InterruptionDeadLetter also takes the events EventBridge could not deliver to Interruption.
	InterruptionDeadLetter awssqs.Queue
}

// NewInterruption creates the EventBridge rules, the function consuming their queue with little
// batching delay (a spot warning gives two minutes), and its permissions: send to the provisioning and
// termination queues, and to its own queue (a notice that keeps failing is sent again as a fresh copy
// rather than dead-lettered). rebalancePolicy is "event" or "replace" (StackProps validates it).
func NewInterruption(scope constructs.Construct, id string, p WorkerProps, q InterruptionQueues, rebalancePolicy string) *Interruption {
	c := constructs.NewConstruct(scope, jsii.String(id))
	timeout := awscdk.Duration_Seconds(jsii.Number(30))
	fn := newWorker(c, "Handler", p, workerSpec{
		name: "interruption", timeout: timeout, reserved: interruptionConcurrency,
		// UpdateItem: a failed attempt gives its event claim back (state.ReleaseEvent).
		stateAccess: append(append([]string{}, stateRead...), stateWrite...),
		extraEnv: map[string]*string{
			"NODEWRIGHT_PROVISIONING_QUEUE_URL": q.Provisioning.QueueUrl(),
			"NODEWRIGHT_TERMINATION_QUEUE_URL":  q.Termination.QueueUrl(),
			"NODEWRIGHT_REBALANCE_POLICY":       jsii.String(rebalancePolicy),
		},
	})
	rules := newInterruptionRules(c, q.Interruption, q.InterruptionDeadLetter)
	consume(fn, q.Interruption, queueTrigger{batchSize: 10, window: awscdk.Duration_Seconds(jsii.Number(2)), pollers: interruptionConcurrency}, timeout)
	q.Provisioning.GrantSendMessages(fn.Function)
	q.Termination.GrantSendMessages(fn.Function)
	q.Interruption.GrantSendMessages(fn.Function)
	// A notice for an instance the state table's index does not name yet is checked with EC2 (its tags).
	allow(fn.Role, "EC2Reads", []string{"ec2:DescribeInstances"}, []string{"*"}, nil)
	suppressWildcards(fn.Role, "ec2:DescribeInstances has no resource-level permissions in IAM.", "Resource::*")
	return &Interruption{Construct: c, Function: fn, Rules: rules}
}
