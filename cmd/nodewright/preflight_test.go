package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/testsupport/awstest"
)

// motoGaps stands in for what moto 5 does not serve: DescribeCluster's accessConfig, vpcId,
// clusterSecurityGroupId and controlPlaneEgressMode (moto neither stores nor returns them), eks:ListAccessEntries and
// eks:DescribeAccessEntry, and lambda:GetAccountSettings. Everything else is moto's answer.
type motoGaps struct {
	preflightEKS
	authMode   ekstypes.AuthenticationMode
	egressMode ekstypes.ControlPlaneEgressModeType
	vpcID      string
	clusterSG  string
	// entries are the cluster's access entries: principal ARN to Kubernetes groups.
	entries    map[string][]string
	unreserved int32
}

func (g *motoGaps) DescribeCluster(ctx context.Context, in *eks.DescribeClusterInput, opts ...func(*eks.Options)) (*eks.DescribeClusterOutput, error) {
	out, err := g.preflightEKS.DescribeCluster(ctx, in, opts...)
	if err != nil {
		return nil, err
	}
	if out.Cluster.AccessConfig == nil && g.authMode != "" {
		out.Cluster.AccessConfig = &ekstypes.AccessConfigResponse{AuthenticationMode: g.authMode}
	}
	if v := out.Cluster.ResourcesVpcConfig; v != nil {
		if v.ControlPlaneEgressMode == "" {
			v.ControlPlaneEgressMode = g.egressMode
		}
		if v.VpcId == nil && g.vpcID != "" {
			v.VpcId = aws.String(g.vpcID)
		}
		if v.ClusterSecurityGroupId == nil && g.clusterSG != "" {
			v.ClusterSecurityGroupId = aws.String(g.clusterSG)
		}
	}
	return out, nil
}

func (g *motoGaps) ListAccessEntries(_ context.Context, in *eks.ListAccessEntriesInput, _ ...func(*eks.Options)) (*eks.ListAccessEntriesOutput, error) {
	out := &eks.ListAccessEntriesOutput{}
	for arn := range g.entries {
		out.AccessEntries = append(out.AccessEntries, arn)
	}
	return out, nil
}

func (g *motoGaps) DescribeAccessEntry(_ context.Context, in *eks.DescribeAccessEntryInput, _ ...func(*eks.Options)) (*eks.DescribeAccessEntryOutput, error) {
	return &eks.DescribeAccessEntryOutput{AccessEntry: &ekstypes.AccessEntry{PrincipalArn: in.PrincipalArn,
		KubernetesGroups: g.entries[aws.ToString(in.PrincipalArn)]}}, nil
}

func (g *motoGaps) GetAccountSettings(context.Context, *lambda.GetAccountSettingsInput, ...func(*lambda.Options)) (*lambda.GetAccountSettingsOutput, error) {
	return &lambda.GetAccountSettingsOutput{AccountLimit: &lambdatypes.AccountLimit{UnreservedConcurrentExecutions: aws.Int32(g.unreserved)}}, nil
}

// columnGap is the padding tabwriter puts between columns.
var columnGap = regexp.MustCompile(` {2,}`)

// motoNetwork is a VPC in moto with two subnets routed out through a NAT gateway, the control plane's
// security group and a group for the functions that the control plane's accepts on 443.
type motoNetwork struct {
	vpc, subnetA, subnetB, controlPlaneSG, functionsSG, mainRouteTable string
}

func newMotoNetwork(t *testing.T, moto *awstest.Moto) motoNetwork {
	t.Helper()
	ctx := context.Background()
	api := ec2.NewFromConfig(moto.Config())
	vpc, err := api.CreateVpc(ctx, &ec2.CreateVpcInput{CidrBlock: aws.String("10.20.0.0/16")})
	require.NoError(t, err)
	n := motoNetwork{vpc: aws.ToString(vpc.Vpc.VpcId)}
	for i, to := range []*string{&n.subnetA, &n.subnetB} {
		sn, err := api.CreateSubnet(ctx, &ec2.CreateSubnetInput{VpcId: vpc.Vpc.VpcId, CidrBlock: aws.String([]string{"10.20.1.0/24", "10.20.2.0/24"}[i]),
			AvailabilityZone: aws.String([]string{"us-east-1a", "us-east-1b"}[i])})
		require.NoError(t, err)
		*to = aws.ToString(sn.Subnet.SubnetId)
	}
	for _, g := range []struct {
		name string
		to   *string
	}{{"control-plane", &n.controlPlaneSG}, {"nodewright-functions", &n.functionsSG}} {
		out, err := api.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{GroupName: aws.String(g.name), Description: aws.String(g.name), VpcId: vpc.Vpc.VpcId})
		require.NoError(t, err)
		*g.to = aws.ToString(out.GroupId)
	}
	// A NAT gateway in the first subnet is the VPC's way out (the main route table's default route).
	eip, err := api.AllocateAddress(ctx, &ec2.AllocateAddressInput{Domain: ec2types.DomainTypeVpc})
	require.NoError(t, err)
	nat, err := api.CreateNatGateway(ctx, &ec2.CreateNatGatewayInput{SubnetId: aws.String(n.subnetA), AllocationId: eip.AllocationId})
	require.NoError(t, err)
	tables, err := api.DescribeRouteTables(ctx, &ec2.DescribeRouteTablesInput{Filters: []ec2types.Filter{
		{Name: aws.String("vpc-id"), Values: []string{n.vpc}}, {Name: aws.String("association.main"), Values: []string{"true"}}}})
	require.NoError(t, err)
	require.Len(t, tables.RouteTables, 1)
	n.mainRouteTable = aws.ToString(tables.RouteTables[0].RouteTableId)
	_, err = api.CreateRoute(ctx, &ec2.CreateRouteInput{RouteTableId: aws.String(n.mainRouteTable), DestinationCidrBlock: aws.String("0.0.0.0/0"),
		NatGatewayId: nat.NatGateway.NatGatewayId})
	require.NoError(t, err)
	_, err = api.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: aws.String(n.controlPlaneSG),
		IpPermissions: []ec2types.IpPermission{{IpProtocol: aws.String("tcp"), FromPort: aws.Int32(443), ToPort: aws.Int32(443),
			UserIdGroupPairs: []ec2types.UserIdGroupPair{{GroupId: aws.String(n.functionsSG)}}}}})
	require.NoError(t, err)
	return n
}

// preflightOnMoto points preflight at moto through --endpoint-url alone, with gaps standing in where
// moto serves nothing, and returns the command's runner.
func preflightOnMoto(t *testing.T, moto *awstest.Moto, gaps *motoGaps) func(args ...string) (int, string, string) {
	t.Helper()
	savedLoad, savedAPIs := loadAWSConfig, newPreflightAPIs
	t.Cleanup(func() { loadAWSConfig, newPreflightAPIs = savedLoad, savedAPIs })
	loadAWSConfig = func(_ context.Context, region string) (aws.Config, error) {
		cfg := moto.ConfigFor(region)
		cfg.BaseEndpoint = nil // the command's --endpoint-url must be what points every client at moto
		return cfg, nil
	}
	newPreflightAPIs = func(cfg aws.Config, endpoint string) preflightAPIs {
		real := savedAPIs(cfg, endpoint)
		gaps.preflightEKS = real.EKS
		return preflightAPIs{EKS: gaps, Lambda: gaps, IAM: real.IAM, EC2: real.EC2}
	}
	return func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := dispatch(append([]string{"preflight", "--region", "us-east-1", "--endpoint-url", moto.Endpoint}, args...), strings.NewReader(""), &out, &errOut)
		return code, out.String(), errOut.String()
	}
}

// itemLine is the output line of one item, its columns joined by " | ".
func itemLine(t *testing.T, out, item string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, item+"  ") {
			return columnGap.ReplaceAllString(l, " | ")
		}
	}
	t.Fatalf("no line for %q in:\n%s", item, out)
	return ""
}

// TestPreflightPrivateClusterNeedsTheVPCSettings: a moto cluster with only private endpoint access and no
// VPC context cannot work: preflight exits non-zero and names vpcSubnetIds and vpcSecurityGroupIds with the
// cluster's subnets and cluster security group; with those settings (subnets in the cluster's VPC, a group the control plane accepts on
// 443) every item works and it exits 0.
func TestPreflightPrivateClusterNeedsTheVPCSettings(t *testing.T) {
	moto := awstest.Shared(t)
	ctx := context.Background()
	n := newMotoNetwork(t, moto)
	_, err := eks.NewFromConfig(moto.Config()).CreateCluster(ctx, &eks.CreateClusterInput{
		Name: aws.String("prod"), Version: aws.String("1.34"), RoleArn: aws.String("arn:aws:iam::" + awstest.AccountID + ":role/eks-cluster"),
		ResourcesVpcConfig: &ekstypes.VpcConfigRequest{SubnetIds: []string{n.subnetA, n.subnetB}, SecurityGroupIds: []string{n.controlPlaneSG},
			EndpointPublicAccess: aws.Bool(false), EndpointPrivateAccess: aws.Bool(true)},
		KubernetesNetworkConfig: &ekstypes.KubernetesNetworkConfigRequest{IpFamily: ekstypes.IpFamilyIpv4},
	})
	require.NoError(t, err)
	// The role as AWS names it: moto's CreateServiceLinkedRole would call it AWSServiceRoleForSpot.
	_, err = iam.NewFromConfig(moto.Config()).CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String(spotServiceLinkedRole),
		Path: aws.String("/aws-service-role/spot.amazonaws.com/"), AssumeRolePolicyDocument: aws.String(`{"Version":"2012-10-17","Statement":[` +
			`{"Effect":"Allow","Principal":{"Service":"spot.amazonaws.com"},"Action":"sts:AssumeRole"}]}`)})
	require.NoError(t, err)
	run := preflightOnMoto(t, moto, &motoGaps{authMode: ekstypes.AuthenticationModeApiAndConfigMap, vpcID: n.vpc, clusterSG: n.controlPlaneSG, unreserved: 1000})

	code, out, errOut := run("--cluster", "prod")
	require.Equal(t, 1, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
	endpoint := itemLine(t, out, "API endpoint")
	assert.Contains(t, endpoint, "will not work")
	assert.Contains(t, endpoint, "private endpoint access only")
	assert.Contains(t, endpoint, "; set -c vpcSubnetIds="+n.subnetA+","+n.subnetB+" -c vpcSecurityGroupIds="+n.controlPlaneSG)
	assert.Contains(t, out, "Nodewright will not work as configured: 1 item(s) will not work, each saying what to change.\n")
	assert.Contains(t, itemLine(t, out, "IP family"), "works")
	assert.Contains(t, itemLine(t, out, "Kubernetes version"), "works")
	assert.Contains(t, itemLine(t, out, "spot service-linked role"), "AWSServiceRoleForEC2Spot exists")
	assert.Contains(t, itemLine(t, out, "access entries"), "none yet")

	code, out, errOut = run("--cluster", "prod", "-c", "vpcSubnetIds="+n.subnetA+","+n.subnetB, "-c", "vpcSecurityGroupIds="+n.functionsSG)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
	assert.Contains(t, itemLine(t, out, "API endpoint"), "works")
	assert.Contains(t, itemLine(t, out, "VPC settings"), "2 subnets and 1 security groups in the cluster's VPC "+n.vpc)
	assert.NotContains(t, out, "will not work")
	assert.NotContains(t, out, string(warning), "no item has a condition to meet")
	assert.Contains(t, out, "Nodewright can work as configured.\n", "every item was checked")
}

// TestPreflightChecksTheVPCSettingsAgainstEC2: subnets of another VPC, an unknown security group, and a
// group the control plane does not accept are each named.
func TestPreflightChecksTheVPCSettingsAgainstEC2(t *testing.T) {
	moto := awstest.Shared(t)
	ctx := context.Background()
	n, other := newMotoNetwork(t, moto), newMotoNetwork(t, moto)
	_, err := eks.NewFromConfig(moto.Config()).CreateCluster(ctx, &eks.CreateClusterInput{
		Name: aws.String("prod"), Version: aws.String("1.33"), RoleArn: aws.String("arn:aws:iam::" + awstest.AccountID + ":role/eks-cluster"),
		ResourcesVpcConfig: &ekstypes.VpcConfigRequest{SubnetIds: []string{n.subnetA}, SecurityGroupIds: []string{n.controlPlaneSG},
			EndpointPublicAccess: aws.Bool(true), EndpointPrivateAccess: aws.Bool(true), PublicAccessCidrs: []string{"203.0.113.0/24"}},
	})
	require.NoError(t, err)
	run := preflightOnMoto(t, moto, &motoGaps{authMode: ekstypes.AuthenticationModeApi, vpcID: n.vpc, unreserved: 1000})

	code, out, _ := run("--cluster", "prod")
	assert.Equal(t, 1, code)
	assert.Contains(t, itemLine(t, out, "API endpoint"), "publicAccessCidrs 203.0.113.0/24: Lambda's changing egress addresses are refused")

	code, out, _ = run("--cluster", "prod", "-c", "vpcSubnetIds="+other.subnetA, "-c", "vpcSecurityGroupIds=sg-0123456789abcdef0")
	assert.Equal(t, 1, code)
	vpcLine := itemLine(t, out, "VPC settings")
	assert.Contains(t, vpcLine, "subnet "+other.subnetA+" is in "+other.vpc+", not the cluster's "+n.vpc)
	assert.Contains(t, vpcLine, "security group sg-0123456789abcdef0 does not exist")

	code, out, _ = run("--cluster", "prod", "-c", "vpcSubnetIds="+n.subnetA, "-c", "vpcSecurityGroupIds="+n.controlPlaneSG+","+other.functionsSG)
	assert.Equal(t, 1, code)
	assert.Contains(t, itemLine(t, out, "VPC settings"), "security group "+other.functionsSG+" is in "+other.vpc)

	// The control plane's group lets in only the functions' group on 443, so a group of the same VPC
	// without such a rule is reported; preflight cannot see CIDR rules' effect, so it is a warning.
	ec2API := ec2.NewFromConfig(moto.Config())
	loose, err := ec2API.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{GroupName: aws.String("loose"), Description: aws.String("loose"), VpcId: aws.String(n.vpc)})
	require.NoError(t, err)
	code, out, _ = run("--cluster", "prod", "-c", "vpcSubnetIds="+n.subnetA, "-c", "vpcSecurityGroupIds="+aws.ToString(loose.GroupId))
	assert.Equal(t, 0, code, out)
	assert.Contains(t, itemLine(t, out, "VPC settings"), "warning | no rule of the cluster's security groups names "+aws.ToString(loose.GroupId)+" on 443")
}

// TestPreflightReportsAMissingCluster: a cluster the region does not have is an error naming it.
func TestPreflightReportsAMissingCluster(t *testing.T) {
	moto := awstest.Shared(t)
	run := preflightOnMoto(t, moto, &motoGaps{})
	code, out, errOut := run("--cluster", "nowhere")
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Contains(t, errOut, "nodewright preflight: EKS cluster nowhere: not found (region us-east-1)")
}

// TestPreflightRegionWithoutFunctionURLsNeedsNoWebhook: in a region without Function URLs the webhook's URL
// cannot be created, so the deploy works only with pendingPodWebhook=false, which preflight names; with it,
// the deployment passes and relies on the one-minute backstop.
func TestPreflightRegionWithoutFunctionURLsNeedsNoWebhook(t *testing.T) {
	moto := awstest.Shared(t)
	_, err := eks.NewFromConfig(moto.ConfigFor("eu-central-2")).CreateCluster(context.Background(), &eks.CreateClusterInput{
		Name: aws.String("zurich"), Version: aws.String("1.32"), RoleArn: aws.String("arn:aws:iam::" + awstest.AccountID + ":role/eks-cluster"),
		ResourcesVpcConfig: &ekstypes.VpcConfigRequest{SubnetIds: []string{"subnet-0aaaaaaaaaaaaaaaa"}, EndpointPublicAccess: aws.Bool(true)},
	})
	require.NoError(t, err)
	run := preflightOnMoto(t, moto, &motoGaps{authMode: ekstypes.AuthenticationModeApi, egressMode: ekstypes.ControlPlaneEgressModeTypeCustomerRouted, unreserved: 1000})

	code, out, _ := run("--cluster", "zurich", "--region", "eu-central-2")
	assert.Equal(t, 1, code, out)
	assert.Contains(t, itemLine(t, out, "Function URLs"), "will not work | eu-central-2 has no Lambda Function URLs")
	assert.Contains(t, itemLine(t, out, "Function URLs"), "; set -c pendingPodWebhook=false")
	assert.Contains(t, itemLine(t, out, "control-plane egress"), "warning | CUSTOMER_ROUTED")

	code, out, _ = run("--cluster", "zurich", "--region", "eu-central-2", "-c", "pendingPodWebhook=false")
	assert.Equal(t, 0, code, out)
	assert.Contains(t, itemLine(t, out, "Function URLs"), "works")
	assert.Contains(t, itemLine(t, out, "control-plane egress"), "works | CUSTOMER_ROUTED: no webhook is deployed")
	assert.Contains(t, itemLine(t, out, "Lambda concurrency"), "the stack reserves 28")
}

// TestPreflightSubnetsNeedAWayOut: functions in a subnet whose route table has no NAT route (isolated, or
// public: Lambda gives no public address) cannot reach the AWS APIs; preflight names vpcEndpoints and
// isolatedVPC, and passes once both are set. The subnet's own table wins over the VPC's main one.
func TestPreflightSubnetsNeedAWayOut(t *testing.T) {
	moto := awstest.Shared(t)
	ctx := context.Background()
	n := newMotoNetwork(t, moto)
	api := ec2.NewFromConfig(moto.Config())
	isolated, err := api.CreateRouteTable(ctx, &ec2.CreateRouteTableInput{VpcId: aws.String(n.vpc)})
	require.NoError(t, err)
	_, err = api.AssociateRouteTable(ctx, &ec2.AssociateRouteTableInput{RouteTableId: isolated.RouteTable.RouteTableId, SubnetId: aws.String(n.subnetB)})
	require.NoError(t, err)
	_, err = eks.NewFromConfig(moto.Config()).CreateCluster(ctx, &eks.CreateClusterInput{
		Name: aws.String("prod"), Version: aws.String("1.34"), RoleArn: aws.String("arn:aws:iam::" + awstest.AccountID + ":role/eks-cluster"),
		ResourcesVpcConfig: &ekstypes.VpcConfigRequest{SubnetIds: []string{n.subnetA, n.subnetB}, SecurityGroupIds: []string{n.controlPlaneSG},
			EndpointPublicAccess: aws.Bool(false), EndpointPrivateAccess: aws.Bool(true)},
	})
	require.NoError(t, err)
	run := preflightOnMoto(t, moto, &motoGaps{authMode: ekstypes.AuthenticationModeApi, vpcID: n.vpc, clusterSG: n.controlPlaneSG, unreserved: 1000})
	inVPC := []string{"--cluster", "prod", "-c", "vpcSubnetIds=" + n.subnetA + "," + n.subnetB, "-c", "vpcSecurityGroupIds=" + n.functionsSG}

	code, out, _ := run(inVPC...)
	assert.Equal(t, 1, code, out)
	line := itemLine(t, out, "subnet egress")
	assert.Contains(t, line, "will not work | the functions in "+n.subnetB+" (no default route) cannot reach EC2, SQS, DynamoDB")
	assert.Contains(t, line, "; set -c vpcEndpoints=true -c isolatedVPC=true")

	code, out, _ = run(append(inVPC, "-c", "vpcEndpoints=true")...)
	assert.Equal(t, 0, code, out)
	assert.Contains(t, itemLine(t, out, "subnet egress"), "warning | the VPC endpoints serve "+n.subnetB+" (no default route), but the Pricing API has none")

	code, out, _ = run(append(inVPC, "-c", "vpcEndpoints=true", "-c", "isolatedVPC=true")...)
	assert.Equal(t, 0, code, out)
	assert.Contains(t, itemLine(t, out, "subnet egress"), "works | isolated: "+n.subnetB+" (no default route) use the VPC endpoints")

	// A public subnet: its default route is an internet gateway, which takes Lambda's interfaces nowhere.
	igw, err := api.CreateInternetGateway(ctx, &ec2.CreateInternetGatewayInput{})
	require.NoError(t, err)
	_, err = api.AttachInternetGateway(ctx, &ec2.AttachInternetGatewayInput{InternetGatewayId: igw.InternetGateway.InternetGatewayId, VpcId: aws.String(n.vpc)})
	require.NoError(t, err)
	_, err = api.CreateRoute(ctx, &ec2.CreateRouteInput{RouteTableId: isolated.RouteTable.RouteTableId, DestinationCidrBlock: aws.String("0.0.0.0/0"),
		GatewayId: igw.InternetGateway.InternetGatewayId})
	require.NoError(t, err)
	code, out, _ = run(inVPC...)
	assert.Equal(t, 1, code, out)
	assert.Contains(t, itemLine(t, out, "subnet egress"), n.subnetB+" (internet gateway only) cannot reach")
	assert.NotContains(t, itemLine(t, out, "subnet egress"), n.subnetA, "the NAT-routed subnet has a way out")
}
