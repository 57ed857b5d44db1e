// Command infra is Nodewright's CDK app: `cdk synth` / `cdk deploy` run it (see cdk.json).
//
// Context values (cdk.json or -c key=value):
//
//	clusterName      the EKS cluster Nodewright manages (required)
//	manifests        file or folder of Karpenter v1 NodePool/EC2NodeClass YAML (required; validated at synth)
//	rebalancePolicy  what a rebalance recommendation does: event (default; record it) or replace
//	clusterPods      the cluster's expected size in pods (default 30000, at most 150000): sizes each function's memory
//	functionsDir     folder of the functions' bootstraps (default dist; `make synth` builds them first)
//	alarmTopicArn    SNS topic (same region) the alarms notify (optional; without it they have no actions)
//	account          AWS account to deploy into (default: CDK_DEFAULT_ACCOUNT; empty = environment-agnostic)
//	region           AWS region (default: CDK_DEFAULT_REGION)
//	vpcSubnetIds, vpcSecurityGroupIds  comma-separated (both or neither): run every function that calls the
//	                 API server in these subnets with these security groups (private or CIDR-restricted endpoints)
//	vpcEndpoints     true: create the interface endpoints those functions need in subnets without NAT (needs vpcId)
//	vpcId            the VPC of vpcSubnetIds (only with vpcEndpoints)
//	isolatedVPC      true: the functions never call the Pricing API and price with the shipped table
//
// cdk-nag's AwsSolutions checks run on every synth; a finding fails the synth unless it is suppressed
// with a written reason next to the resource.
package main

import (
	"fmt"
	"os"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
)

func main() {
	defer jsii.Close()
	app := awscdk.NewApp(nil)
	props, err := stackPropsFromContext(app)
	if err != nil {
		fmt.Fprintln(os.Stderr, "nodewright infra:", err)
		os.Exit(1)
	}
	NewNodewrightStack(app, props.StackName(), props)
	awscdk.Aspects_Of(app).Add(cdknag.NewAwsSolutionsChecks(&cdknag.NagPackProps{Verbose: jsii.Bool(true)}), nil)
	app.Synth(nil)
}
