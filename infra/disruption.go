package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// Disruption is the consolidation function: once a minute, and whenever the termination flow finishes a
// drain (the wake queue), one run at a time decides which empty or underused nodes to remove or replace
// with cheaper ones, launches the replacements first and hands the old nodes to the termination flow.
type Disruption struct {
	constructs.Construct
	Function *GoFunction
}

// DisruptionQueues are the queues the disruption function reads and writes.
type DisruptionQueues struct {
	// Wake is consumed: a message only starts a run.
	Wake awssqs.Queue
	// Termination receives the nodes to drain.
	Termination awssqs.Queue
}

// disruptionTimeout leaves a run time for several commands, each a whole-cluster search, the 15 s
// validation wait and the launch of its replacement (the runner keeps a margin before the deadline).
var disruptionTimeout = awscdk.Duration_Seconds(jsii.Number(180))

// NewDisruption creates the function (one run at a time: it is a single writer of disruption commands, and
// the lease holds across overlapping invocations too), its schedule and wake trigger, and its permissions:
// the state table (claims, commands, the budget ledger), launching replacements exactly as the provisioner
// does (own tags only), reading instances, and sending to the termination queue. It never terminates an
// instance itself (DESIGN decision 10). Its settings (Karpenter's SpotToSpotConsolidation gate among them)
// are read from the state table with the NodePools.
func NewDisruption(scope constructs.Construct, id string, p WorkerProps, q DisruptionQueues, nodes NodeIdentities) *Disruption {
	c := constructs.NewConstruct(scope, jsii.String(id))
	fn := newWorker(c, "Handler", p, workerSpec{
		name: "disruption", timeout: disruptionTimeout, reserved: singleWriterConcurrency, prices: true,
		stateAccess: stateAccess(stateRead, stateWrite, []string{"dynamodb:DeleteItem", "dynamodb:BatchWriteItem"}, claimCreate, claimView),
		extraEnv: map[string]*string{
			"NODEWRIGHT_TERMINATION_QUEUE_URL": q.Termination.QueueUrl(),
		},
	})
	everyMinute(fn, "Nodewright consolidation for cluster "+p.ClusterName)
	consume(fn, q.Wake, queueTrigger{batchSize: 10, window: awscdk.Duration_Seconds(jsii.Number(2)), pollers: queuePollers}, disruptionTimeout)
	q.Termination.GrantSendMessages(fn.Function)
	allowProvisionerEC2(fn.Role, p.ClusterName)
	allowNodeIdentities(fn.Role, p.ClusterName, nodes)
	return &Disruption{Construct: c, Function: fn}
}
