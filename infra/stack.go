package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/nodewright/nodewright/shared/adapters/footprint"
	"github.com/nodewright/nodewright/shared/core/sizing"
)

// NodewrightStack holds everything one cluster's Nodewright needs. Each concern is its own construct.
type NodewrightStack struct {
	awscdk.Stack
	State  *StateTable
	Queues *Queues
	Config *ConfigDeployment
	// Webhook is nil when the deployment has none (StackProps.PendingPodWebhook).
	Webhook *Webhook
	// Endpoints are the VPC endpoints (nil unless the context asks for them).
	Endpoints *VPCEndpoints

	Provisioner  *Provisioner
	Lifecycle    *Lifecycle
	Interruption *Interruption
	Termination  *Termination
	Disruption   *Disruption
	Access       *ClusterAccess

	Alarms    *Alarms
	Dashboard *Dashboard
}

// NewNodewrightStack builds the stack for props.ClusterName.
func NewNodewrightStack(scope constructs.Construct, id string, props StackProps) *NodewrightStack {
	stack := awscdk.NewStack(scope, jsii.String(id), &props.StackProps)
	awscdk.Tags_Of(stack).Add(jsii.String("nodewright.sh/cluster"), jsii.String(props.ClusterName), nil)

	s := &NodewrightStack{Stack: stack}
	s.State = NewStateTable(stack, "State")
	s.Queues = NewQueues(stack, "Queues")
	s.Config = NewConfigDeployment(stack, "Config", s.State.Table, props.Config)
	if props.PendingPodWebhook {
		s.Webhook = NewWebhook(stack, "Webhook", props.ClusterName, props.FunctionsDir, sizeOf(props.Sizes, sizing.Webhook), s.Queues.Provisioning)
	}

	worker := WorkerProps{ClusterName: props.ClusterName, FunctionsDir: props.FunctionsDir, Table: s.State.Table, Sizes: props.Sizes,
		VPC: props.VPC}
	if props.VPC.Endpoints {
		s.Endpoints = NewVPCEndpoints(stack, "Endpoints", props.VPC)
		worker.Endpoints = s.Endpoints
	}
	s.Provisioner = NewProvisioner(stack, "Provisioner", worker, s.Queues.Provisioning, props.Nodes)
	s.Lifecycle = NewLifecycle(stack, "Lifecycle", worker, s.Queues.Termination)
	s.Interruption = NewInterruption(stack, "Interruption", worker, InterruptionQueues{
		Interruption: s.Queues.Interruption, Provisioning: s.Queues.Provisioning, Termination: s.Queues.Termination,
		InterruptionDeadLetter: s.Queues.DeadLetter["Interruption"],
	}, props.RebalancePolicy)
	s.Termination = NewTermination(stack, "Termination", worker, s.Queues.Termination, s.Queues.Provisioning, s.Queues.DisruptionWake)
	s.Disruption = NewDisruption(stack, "Disruption", worker, DisruptionQueues{Wake: s.Queues.DisruptionWake, Termination: s.Queues.Termination},
		props.Nodes)
	// The construct ids stay those of the shared-group entries they replace, so an upgrade updates each
	// entry's group in place (an entry cannot be created twice for one role).
	s.Access = NewClusterAccess(stack, "ClusterAccess", props.ClusterName, map[string]FunctionRole{
		"Provisioner":  {footprint.Provisioner, s.Provisioner.Function.Role},
		"Lifecycle":    {footprint.Lifecycle, s.Lifecycle.Function.Role},
		"Interruption": {footprint.Interruption, s.Interruption.Function.Role},
		"Termination":  {footprint.Termination, s.Termination.Function.Role},
		"Disruption":   {footprint.Disruption, s.Disruption.Function.Role},
	})

	watched := Watched{ClusterName: props.ClusterName, Queues: s.Queues, Functions: []NamedFunction{
		{"Provisioner", s.Provisioner.Function.Function},
		{"Lifecycle", s.Lifecycle.Function.Function}, {"Interruption", s.Interruption.Function.Function},
		{"Termination", s.Termination.Function.Function}, {"Disruption", s.Disruption.Function.Function},
	}}
	if s.Webhook != nil {
		watched.Functions = append([]NamedFunction{{"Webhook", s.Webhook.Function.Function}}, watched.Functions...)
	}
	s.Alarms = NewAlarms(stack, "Alarms", watched, props.AlarmTopicArn)
	s.Dashboard = NewDashboard(stack, "Dashboard", watched, s.Alarms.All)

	output(stack, "StateTableName", s.State.Table.TableName())
	output(stack, "ProvisioningQueueUrl", s.Queues.Provisioning.QueueUrl())
	output(stack, "InterruptionQueueUrl", s.Queues.Interruption.QueueUrl())
	output(stack, "TerminationQueueUrl", s.Queues.Termination.QueueUrl())
	if s.Webhook != nil {
		output(stack, "WebhookFunctionUrl", s.Webhook.URL.Url())
		output(stack, "WebhookTokenSecretArn", s.Webhook.Token.SecretArn())
	}
	return s
}

func output(stack awscdk.Stack, id string, value *string) {
	awscdk.NewCfnOutput(stack, jsii.String(id), &awscdk.CfnOutputProps{Value: value})
}
