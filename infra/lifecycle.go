package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// Lifecycle is the once-a-minute housekeeping function: node registration and initialization,
// liveness, garbage collection of leaked instances, and the instance type and price catalog refresh.
type Lifecycle struct {
	constructs.Construct
	Function *GoFunction
}

// lifecycleEC2Reads are the reads of garbage collection (instances) and the catalog refresh (instance
// types, offerings, spot prices). None supports resource-level permissions.
var lifecycleEC2Reads = []string{
	"ec2:DescribeAvailabilityZones", "ec2:DescribeInstances", "ec2:DescribeInstanceTypeOfferings",
	"ec2:DescribeInstanceTypes", "ec2:DescribeSpotPriceHistory",
}

// NewLifecycle creates the function (one run at a time), its schedule and its permissions: EC2 reads,
// prices, and terminating only the cluster's own instances.
func NewLifecycle(scope constructs.Construct, id string, p WorkerProps) *Lifecycle {
	c := constructs.NewConstruct(scope, jsii.String(id))
	fn := newWorker(c, "Handler", p, workerSpec{
		name: "lifecycle", timeout: awscdk.Duration_Seconds(jsii.Number(60)), memoryMB: 512, reserved: 1,
		stateAccess: append(append([]string{}, stateRead...), stateWrite...),
	})
	everyMinute(fn, "Nodewright node lifecycle for cluster "+p.ClusterName)
	allow(fn.Role, "EC2Reads", lifecycleEC2Reads, []string{"*"}, nil)
	allow(fn.Role, "Prices", []string{"pricing:GetProducts"}, []string{"*"}, nil)
	allowTerminateOwned(fn.Role, p.ClusterName)
	suppressWildcards(fn.Role, "EC2 Describe* calls and pricing:GetProducts have no resource-level permissions in IAM; "+
		"the statement lists each read action instead of ec2:Describe*.", "Resource::*")
	suppressWildcards(fn.Role, "Instances are known only at run time; TerminateInstances requires the cluster's "+
		"kubernetes.io/cluster/<name>=owned tag on the instance.", arnWildcard("ec2", `instance\/\*`, true))
	return &Lifecycle{Construct: c, Function: fn}
}
