package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/nodewright/nodewright/shared/adapters/instance"
)

// Lifecycle is the once-a-minute housekeeping function: node registration and initialization,
// liveness, garbage collection of leaked instances, and the instance type and price catalog refresh.
type Lifecycle struct {
	constructs.Construct
	Function *GoFunction
}

// lifecycleEC2Reads are the reads of garbage collection (instances), node repair (the impaired status
// checks; called only while the NodeRepair feature gate is on, but granted whatever the settings, like
// the other reads, so the role does not depend on them), the catalog refresh (instance types, offerings,
// spot prices) and housekeeping (launch templates and when they were last used). None supports
// resource-level permissions.
var lifecycleEC2Reads = []string{
	"ec2:DescribeInstances", "ec2:DescribeInstanceStatus", "ec2:DescribeInstanceTypeOfferings",
	"ec2:DescribeInstanceTypes", "ec2:DescribeLaunchTemplates", "ec2:DescribeSpotPriceHistory", "ec2:DescribeTags",
}

// NewLifecycle creates the function (one run at a time), its schedule and its permissions: EC2 reads,
// prices, deleting the cluster's unused launch templates and instance profiles, and sending to the
// termination queue: it never terminates an instance itself (DESIGN decision 10).
func NewLifecycle(scope constructs.Construct, id string, p WorkerProps, terminations awssqs.Queue) *Lifecycle {
	c := constructs.NewConstruct(scope, jsii.String(id))
	fn := newWorker(c, "Handler", p, workerSpec{
		name: "lifecycle", timeout: awscdk.Duration_Seconds(jsii.Number(60)), reserved: lifecycleConcurrency, prices: true,
		stateAccess: stateAccess(stateRead, stateWrite, claimCreate, claimView),
		extraEnv:    map[string]*string{"NODEWRIGHT_TERMINATION_QUEUE_URL": terminations.QueueUrl()},
	})
	terminations.GrantSendMessages(fn.Function)
	everyMinute(fn, "Nodewright node lifecycle for cluster "+p.ClusterName)
	onInstanceRunning(fn, "Nodewright node lifecycle for cluster "+p.ClusterName+": an instance is running, its Node will join")
	allow(fn.Role, "EC2Reads", lifecycleEC2Reads, []string{"*"}, nil)
	if !p.VPC.Isolated { // an isolated function never calls the Pricing API
		allow(fn.Role, "Prices", []string{"pricing:GetProducts"}, []string{"*"}, nil)
	}
	allowHousekeeping(fn.Role, p.ClusterName)
	allowNameOwnedInstances(fn.Role, p.ClusterName)
	suppressWildcards(fn.Role, "EC2 Describe* calls and pricing:GetProducts have no resource-level permissions in IAM; "+
		"the statement lists each read action instead of ec2:Describe*.", "Resource::*")
	return &Lifecycle{Construct: c, Function: fn}
}

// allowNameOwnedInstances lets role give the cluster's instances the Name tag of their Node, as Karpenter
// does once a NodeClaim registers (lifecycle.nameInstances): only that key, only on instances tagged
// nodewright.sh/cluster=<cluster>.
func allowNameOwnedInstances(role awsiam.Role, cluster string) {
	allow(role, "NameOwnedInstances", []string{"ec2:CreateTags"}, []string{ec2Arn(role, "instance", true)}, conditions{
		"StringEquals":              ownedBy("ResourceTag", cluster),
		"ForAllValues:StringEquals": map[string]interface{}{"aws:TagKeys": []string{instance.TagName}},
	})
	suppressWildcards(role, "The lifecycle names instances known only at run time; CreateTags requires the cluster's "+
		"nodewright.sh/cluster=<name> tag on the instance and allows only the Name key.",
		arnWildcard("ec2", `instance\/\*`, true))
}

// onInstanceRunning also starts the function when an EC2 instance enters running: a Node is about to
// join, and the function keeps passing every few seconds until it has registered and initialized, so
// registration does not wait for the next minute's tick. The event carries no tags, so every instance of
// the account and region matches; a run that finds nothing joining ends at once, and one that finds the
// lease held (the schedule's run) ends at once too.
func onInstanceRunning(fn *GoFunction, description string) awsevents.Rule {
	return awsevents.NewRule(fn.Construct, jsii.String("OnInstanceRunning"), &awsevents.RuleProps{
		Description: jsii.String(description),
		EventPattern: &awsevents.EventPattern{
			Source:     jsii.Strings("aws.ec2"),
			DetailType: jsii.Strings("EC2 Instance State-change Notification"),
			Detail:     &map[string]interface{}{"state": []string{"running"}},
		},
		Targets: &[]awsevents.IRuleTarget{awseventstargets.NewLambdaFunction(fn.Function, &awseventstargets.LambdaFunctionProps{
			MaxEventAge: awscdk.Duration_Minutes(jsii.Number(1)), RetryAttempts: jsii.Number(0),
		})},
	})
}
