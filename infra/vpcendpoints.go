package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsec2"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// endpointService is an AWS service the functions in the VPC call, reached through an interface endpoint.
type endpointService struct {
	name string // the last part of com.amazonaws.<region>.<name>
	// privateDNS makes the service's usual hostname resolve to the endpoint inside the VPC, so the SDK
	// needs no setting.
	privateDNS bool
}

// endpointServices are what the functions in the VPC call (see the service clients under shared/):
// EC2 (instances, fleets, launch templates, prices of spot), SQS (the work queues), SSM (AMI aliases),
// EKS (DescribeCluster for the endpoint and CA) and DynamoDB (the state table). DynamoDB's interface
// endpoint is reached by its own hostname (AWS_ENDPOINT_URL_DYNAMODB, see VPCEndpoints.DynamoDBURL), which
// works beside a gateway endpoint the VPC may already have.
//
// Not created, because no function in the VPC calls them from there: STS (the Kubernetes token is a
// presigned GetCallerIdentity URL that the API server, not the function, sends to STS), CloudWatch Logs
// (Lambda delivers the functions' logs and EMF metrics itself), Secrets Manager (only the webhook reads
// it, outside the VPC). The Pricing API has no endpoint in most regions: isolatedVPC keeps the functions
// off it. IAM has no endpoint at all (see infra/README.md: EC2NodeClasses name an instanceProfile there).
var endpointServices = []endpointService{
	{"ec2", true}, {"sqs", true}, {"ssm", true}, {"eks", true}, {"dynamodb", false},
}

// VPCEndpoints are the interface endpoints the functions need in subnets without a route out, in the
// functions' subnets, behind a security group that accepts HTTPS from the functions' security groups only.
type VPCEndpoints struct {
	constructs.Construct
	SecurityGroup awsec2.CfnSecurityGroup
	// Endpoints by service name (endpointServices).
	Endpoints map[string]awsec2.CfnVPCEndpoint
	// DynamoDBURL is https://<the DynamoDB endpoint's regional hostname>, for AWS_ENDPOINT_URL_DYNAMODB.
	DynamoDBURL *string
}

// NewVPCEndpoints creates the endpoints for v (v.Endpoints set, v.VpcID given: vpcPlacementFromContext).
func NewVPCEndpoints(scope constructs.Construct, id string, v VPCPlacement) *VPCEndpoints {
	c := constructs.NewConstruct(scope, jsii.String(id))
	ingress := make([]interface{}, len(v.SecurityGroupIDs))
	for i, sg := range v.SecurityGroupIDs {
		ingress[i] = &awsec2.CfnSecurityGroup_IngressProperty{
			IpProtocol: jsii.String("tcp"), FromPort: jsii.Number(443), ToPort: jsii.Number(443),
			SourceSecurityGroupId: jsii.String(sg), Description: jsii.String("HTTPS from the Nodewright functions in " + sg),
		}
	}
	sg := awsec2.NewCfnSecurityGroup(c, jsii.String("SecurityGroup"), &awsec2.CfnSecurityGroupProps{
		GroupDescription:     jsii.String("Nodewright VPC endpoints: HTTPS from the security groups of the functions"),
		VpcId:                jsii.String(v.VpcID),
		SecurityGroupIngress: &ingress,
		// An endpoint opens no connection: the rule CDK uses to allow no egress at all (an ICMP type that does
		// not exist, to an address that cannot be routed) replaces the default allow-all.
		SecurityGroupEgress: &[]interface{}{&awsec2.CfnSecurityGroup_EgressProperty{
			IpProtocol: jsii.String("icmp"), FromPort: jsii.Number(252), ToPort: jsii.Number(86),
			CidrIp: jsii.String("255.255.255.255/32"), Description: jsii.String("Disallow all traffic"),
		}},
	})
	e := &VPCEndpoints{Construct: c, SecurityGroup: sg, Endpoints: map[string]awsec2.CfnVPCEndpoint{}}
	for _, svc := range endpointServices {
		e.Endpoints[svc.name] = awsec2.NewCfnVPCEndpoint(c, jsii.String(svc.name), &awsec2.CfnVPCEndpointProps{
			VpcId:             jsii.String(v.VpcID),
			ServiceName:       jsii.String("com.amazonaws." + *awscdk.Aws_REGION() + "." + svc.name),
			VpcEndpointType:   jsii.String("Interface"),
			SubnetIds:         anyList(v.SubnetIDs),
			SecurityGroupIds:  &[]interface{}{sg.AttrGroupId()},
			PrivateDnsEnabled: jsii.Bool(svc.privateDNS),
		})
	}
	// DnsEntries lists "<hosted zone>:<hostname>" pairs, the regional hostname first.
	first := awscdk.Fn_Select(jsii.Number(0), e.Endpoints["dynamodb"].AttrDnsEntries())
	e.DynamoDBURL = awscdk.Fn_Join(jsii.String(""), jsii.Strings("https://",
		*awscdk.Fn_Select(jsii.Number(1), awscdk.Fn_Split(jsii.String(":"), first, nil))))
	return e
}

// anyList is ids as the untyped list L1 properties take.
func anyList(ids []string) *[]interface{} {
	out := make([]interface{}, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return &out
}

// env is what a function in the VPC needs to reach the services through e: the DynamoDB endpoint's URL
// (the SDK reads AWS_ENDPOINT_URL_DYNAMODB); nil without endpoints.
func (e *VPCEndpoints) env() map[string]*string {
	if e == nil {
		return nil
	}
	return map[string]*string{"AWS_ENDPOINT_URL_DYNAMODB": e.DynamoDBURL}
}
