package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// Termination drains and removes nodes: taint, evict in tiers, terminate the instance, delete the Node.
// Each message is one step of a drain; the function re-sends it to its own queue with a delay until the
// drain is done.
type Termination struct {
	constructs.Construct
	Function *GoFunction
}

// NewTermination creates the function consuming queue, allowed to re-send to it, to wake the provisioner
// through provisioning when a drain starts, to read instances and to terminate only the cluster's own.
// It also deletes disruption budget reservations when a drain ends, and wakes the disruption function
// through disruptionWake when a claim is gone, so the next consolidation step does not wait for the minute.
func NewTermination(scope constructs.Construct, id string, p WorkerProps, queue, provisioning, disruptionWake awssqs.Queue) *Termination {
	c := constructs.NewConstruct(scope, jsii.String(id))
	timeout := awscdk.Duration_Seconds(jsii.Number(60))
	fn := newWorker(c, "Handler", p, workerSpec{
		name: "termination", timeout: timeout, reserved: terminationConcurrency,
		stateAccess: append(append(append([]string{}, stateRead...), stateWrite...), "dynamodb:DeleteItem"),
		extraEnv: map[string]*string{"NODEWRIGHT_TERMINATION_QUEUE_URL": queue.QueueUrl(),
			"NODEWRIGHT_PROVISIONING_QUEUE_URL": provisioning.QueueUrl(), "NODEWRIGHT_DISRUPTION_QUEUE_URL": disruptionWake.QueueUrl()},
	})
	consume(fn, queue, queueTrigger{batchSize: 10, pollers: terminationConcurrency}, timeout)
	queue.GrantSendMessages(fn.Function)
	provisioning.GrantSendMessages(fn.Function)
	disruptionWake.GrantSendMessages(fn.Function)
	allow(fn.Role, "EC2Reads", []string{"ec2:DescribeInstances"}, []string{"*"}, nil)
	allowTerminateOwned(fn.Role, p.ClusterName)
	suppressWildcards(fn.Role, "ec2:DescribeInstances has no resource-level permissions in IAM.", "Resource::*")
	suppressWildcards(fn.Role, terminateSuppression, arnWildcard("ec2", `instance\/\*`, true))
	return &Termination{Construct: c, Function: fn}
}
