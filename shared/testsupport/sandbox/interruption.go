package sandbox

import (
	"context"
	"time"

	"github.com/nodewright/nodewright/shared/adapters/footprint"
	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/flows/interruption"
	"github.com/nodewright/nodewright/shared/flows/termination"
)

// startInterruption starts the interruption and termination functions behind their queues, wired as
// functions/interruption and functions/termination wire them.
func (s *Sandbox) startInterruption(ctx context.Context) {
	s.Interruption = interruption.NewService(interruption.ServiceConfig{ClusterName: Cluster,
		ProvisioningQueueURL: s.Queues.Provisioning, TerminationQueueURL: s.Queues.Termination},
		interruption.ServiceDeps{State: s.Store, Instances: instance.New(s.EC2, Cluster), Reasons: instance.New(s.EC2, Cluster), Nodes: kube.NewActions(s.FunctionClient(footprint.Interruption)), Events: s.claimEvents(footprint.Interruption, nil), Queue: s.SQS, Visibility: s.SQS,
			Log: s.Log, Mirrors: s.claimFollower(footprint.Interruption), Now: time.Now})
	s.Termination = termination.NewService(termination.Config{QueueURL: s.Queues.Termination,
		ProvisioningQueueURL: s.Queues.Provisioning, DisruptionQueueURL: s.Queues.DisruptionWake, ClusterName: Cluster, Log: s.Log},
		termination.Deps{Store: s.Store, Kube: s.FunctionClient(footprint.Termination), Instances: instance.New(s.EC2, Cluster), Events: s.recorders[footprint.Termination], Queue: s.SQS,
			Visibility: s.SQS, Mirrors: s.claimFollower(footprint.Termination), Now: time.Now})
	s.goRun(func() {
		(&eventSource{name: "interruption", queueURL: s.Queues.Interruption, sqs: s.SQS, handle: s.Interruption.HandleBatch,
			timeout: 30 * time.Second, idle: 50 * time.Millisecond, onError: s.fail}).run(ctx)
	})
	s.goRun(func() {
		(&eventSource{name: "termination", queueURL: s.Queues.Termination, sqs: s.SQS, handle: s.Termination.HandleBatch,
			timeout: s.opts.FunctionTimeout, idle: 100 * time.Millisecond, onError: s.fail}).run(ctx)
	})
}
