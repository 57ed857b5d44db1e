package main

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"
)

// VPCPlacement says where the functions that call the Kubernetes API server run. Outside a VPC (the
// default) they reach the API server's public endpoint from Lambda's changing addresses, which a
// private-only endpoint or one limited by publicAccessCidrs refuses; in the cluster's VPC they reach its
// private endpoint. The webhook never joins the VPC: the API server calls it, it calls no API server.
type VPCPlacement struct {
	// SubnetIDs and SecurityGroupIDs (context values vpcSubnetIds, vpcSecurityGroupIds) are the functions'
	// VpcConfig; both are empty outside a VPC.
	SubnetIDs, SecurityGroupIDs []string
	// Endpoints (vpcEndpoints) creates the interface endpoints the functions call AWS through when the
	// subnets have no route out (see vpcendpoints.go) in the VPC VpcID (vpcId).
	Endpoints bool
	VpcID     string
	// Isolated (isolatedVPC, as Karpenter's ISOLATED_VPC) tells the functions they cannot reach the
	// internet: they never call the Pricing API, which has no endpoint in most regions, and price with
	// the shipped table.
	Isolated bool
}

// InVPC is whether the functions that call the API server are placed in a VPC.
func (v VPCPlacement) InVPC() bool { return len(v.SubnetIDs) > 0 }

// Lambda's limits on a function's VpcConfig.
const (
	maxFunctionSubnets        = 16
	maxFunctionSecurityGroups = 5
)

var (
	subnetIDPattern        = regexp.MustCompile(`^subnet-([0-9a-f]{8}|[0-9a-f]{17})$`)
	securityGroupIDPattern = regexp.MustCompile(`^sg-([0-9a-f]{8}|[0-9a-f]{17})$`)
	vpcIDPattern           = regexp.MustCompile(`^vpc-([0-9a-f]{8}|[0-9a-f]{17})$`)
)

// vpcPlacementFromContext reads vpcSubnetIds, vpcSecurityGroupIds, vpcEndpoints, vpcId and isolatedVPC
// (get returns a context value, nil when unset) and refuses, naming the value, what could not deploy or
// would silently do nothing.
func vpcPlacementFromContext(get func(key string) interface{}) (VPCPlacement, error) {
	var v VPCPlacement
	var err error
	if v.SubnetIDs, err = idList("vpcSubnetIds", get("vpcSubnetIds"), subnetIDPattern, "subnet-0123456789abcdef0", maxFunctionSubnets); err != nil {
		return v, err
	}
	if v.SecurityGroupIDs, err = idList("vpcSecurityGroupIds", get("vpcSecurityGroupIds"), securityGroupIDPattern,
		"sg-0123456789abcdef0", maxFunctionSecurityGroups); err != nil {
		return v, err
	}
	switch {
	case len(v.SubnetIDs) > 0 && len(v.SecurityGroupIDs) == 0:
		return v, fmt.Errorf("context value vpcSubnetIds %q is set but vpcSecurityGroupIds is not: give both (the functions' "+
			"subnets and security groups) or neither", strings.Join(v.SubnetIDs, ","))
	case len(v.SubnetIDs) == 0 && len(v.SecurityGroupIDs) > 0:
		return v, fmt.Errorf("context value vpcSecurityGroupIds %q is set but vpcSubnetIds is not: give both (the functions' "+
			"subnets and security groups) or neither", strings.Join(v.SecurityGroupIDs, ","))
	}
	if v.Endpoints, err = boolContext("vpcEndpoints", get("vpcEndpoints")); err != nil {
		return v, err
	}
	if v.Isolated, err = boolContext("isolatedVPC", get("isolatedVPC")); err != nil {
		return v, err
	}
	vpcID, ok := get("vpcId").(string)
	if raw := get("vpcId"); raw != nil && !ok {
		return v, fmt.Errorf("context value vpcId %v is not a VPC id (vpc-0123456789abcdef0)", raw)
	}
	switch {
	case vpcID != "" && !vpcIDPattern.MatchString(vpcID):
		return v, fmt.Errorf("context value vpcId %q is not a VPC id (vpc-0123456789abcdef0)", vpcID)
	case vpcID != "" && !v.Endpoints:
		return v, fmt.Errorf("context value vpcId %q is used only to create the VPC endpoints: set vpcEndpoints=true too, or leave vpcId out", vpcID)
	case v.Endpoints && !v.InVPC():
		return v, fmt.Errorf("context value vpcEndpoints=true needs vpcSubnetIds and vpcSecurityGroupIds: the endpoints are " +
			"created in the functions' subnets and accept the functions' security groups")
	case v.Endpoints && vpcID == "":
		return v, fmt.Errorf("context value vpcEndpoints=true needs vpcId, the VPC of vpcSubnetIds (the cluster's VPC)")
	}
	v.VpcID = vpcID
	return v, nil
}

// idList reads a list of ids: comma-separated text (-c key=a,b) or a JSON list of strings (cdk.json).
// Every id must match pattern (example shows the form), once, and at most max of them.
func idList(key string, raw interface{}, pattern *regexp.Regexp, example string, max int) ([]string, error) {
	var parts []string
	switch raw := raw.(type) {
	case nil:
		return nil, nil
	case string:
		if strings.TrimSpace(raw) == "" {
			return nil, nil
		}
		parts = strings.Split(raw, ",")
	case []interface{}:
		for _, p := range raw {
			s, ok := p.(string)
			if !ok {
				return nil, fmt.Errorf("context value %s %v is not a list of ids like %s", key, raw, example)
			}
			parts = append(parts, s)
		}
	default:
		return nil, fmt.Errorf("context value %s %v is not a comma-separated list of ids like %s", key, raw, example)
	}
	seen := map[string]bool{}
	ids := make([]string, 0, len(parts))
	for _, p := range parts {
		id := strings.TrimSpace(p)
		switch {
		case !pattern.MatchString(id):
			return nil, fmt.Errorf("context value %s %q: %q is not an id like %s", key, strings.Join(parts, ","), id, example)
		case seen[id]:
			return nil, fmt.Errorf("context value %s %q names %s twice", key, strings.Join(parts, ","), id)
		}
		seen[id] = true
		ids = append(ids, id)
	}
	if len(ids) > max {
		return nil, fmt.Errorf("context value %s %q names %d ids; a Lambda function takes at most %d", key, strings.Join(ids, ","), len(ids), max)
	}
	return ids, nil
}

// placeInVPC gives fn the VpcConfig of v and its role what Lambda needs to attach it (allowVPCAccess).
// The VpcConfig is set on the function resource directly: the construct's own VPC option would also
// attach the AWS managed policy AWSLambdaVPCAccessExecutionRole, which grants the same actions on every
// resource of the account.
func placeInVPC(fn *GoFunction, v VPCPlacement) {
	if !v.InVPC() {
		return
	}
	cfn := fn.Function.Node().DefaultChild().(awslambda.CfnFunction)
	cfn.SetVpcConfig(&awslambda.CfnFunction_VpcConfigProperty{
		SubnetIds: jsii.Strings(v.SubnetIDs...), SecurityGroupIds: jsii.Strings(v.SecurityGroupIDs...),
	})
	allowVPCAccess(fn.Role, v)
	// Lambda creates the function's network interfaces with the role when it creates the function, so
	// the role's policy must exist first.
	fn.Function.Node().AddDependency(fn.Role)
}

// allowVPCAccess lets role create, find and remove the network interfaces Lambda attaches a function to
// its subnets with (the actions of AWSLambdaVPCAccessExecutionRole, scoped): interfaces are created only in
// v's subnets with v's security groups; the reads have no resource-level permissions; deleting and
// re-addressing are on the interfaces of the account and region, whose ids EC2 draws at creation.
func allowVPCAccess(role awsiam.Role, v VPCPlacement) {
	stack := awscdk.Stack_Of(role)
	named := func(resource string, ids []string) []string {
		arns := make([]string, len(ids))
		for i, id := range ids {
			arns[i] = *stack.FormatArn(&awscdk.ArnComponents{Service: jsii.String("ec2"), Resource: jsii.String(resource),
				ResourceName: jsii.String(id)})
		}
		return arns
	}
	interfaces := ec2Arn(role, "network-interface", true)
	allow(role, "VpcNetworkInterfaceReads", []string{"ec2:DescribeNetworkInterfaces", "ec2:DescribeSubnets"}, []string{"*"}, nil)
	allow(role, "VpcNetworkInterfaceCreate", []string{"ec2:CreateNetworkInterface"},
		append(append([]string{interfaces}, named("subnet", v.SubnetIDs)...), named("security-group", v.SecurityGroupIDs)...), nil)
	allow(role, "VpcNetworkInterfaceManage", []string{"ec2:DeleteNetworkInterface", "ec2:AssignPrivateIpAddresses",
		"ec2:UnassignPrivateIpAddresses"}, []string{interfaces}, nil)
	suppressWildcards(role, "Lambda attaches a function in a VPC through network interfaces it creates with the function's "+
		"role; ec2:DescribeNetworkInterfaces and ec2:DescribeSubnets have no resource-level permissions, and the "+
		"interfaces' ids are drawn by EC2 when Lambda creates them (only in the configured subnets and security groups).",
		"Resource::*", arnWildcard("ec2", `network-interface\/\*`, true))
}
