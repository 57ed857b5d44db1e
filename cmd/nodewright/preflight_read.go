package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	"github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/nodewright/nodewright/shared/adapters/footprint"
)

// The calls preflight makes, one small interface per service so tests can stand in for what moto lacks.
type (
	preflightEKS interface {
		DescribeCluster(context.Context, *eks.DescribeClusterInput, ...func(*eks.Options)) (*eks.DescribeClusterOutput, error)
		ListAccessEntries(context.Context, *eks.ListAccessEntriesInput, ...func(*eks.Options)) (*eks.ListAccessEntriesOutput, error)
		DescribeAccessEntry(context.Context, *eks.DescribeAccessEntryInput, ...func(*eks.Options)) (*eks.DescribeAccessEntryOutput, error)
	}
	preflightLambda interface {
		GetAccountSettings(context.Context, *lambda.GetAccountSettingsInput, ...func(*lambda.Options)) (*lambda.GetAccountSettingsOutput, error)
	}
	preflightIAM interface {
		GetRole(context.Context, *iam.GetRoleInput, ...func(*iam.Options)) (*iam.GetRoleOutput, error)
	}
	preflightEC2 interface {
		DescribeSubnets(context.Context, *ec2.DescribeSubnetsInput, ...func(*ec2.Options)) (*ec2.DescribeSubnetsOutput, error)
		DescribeSecurityGroups(context.Context, *ec2.DescribeSecurityGroupsInput, ...func(*ec2.Options)) (*ec2.DescribeSecurityGroupsOutput, error)
		DescribeRouteTables(context.Context, *ec2.DescribeRouteTablesInput, ...func(*ec2.Options)) (*ec2.DescribeRouteTablesOutput, error)
	}
)

// preflightAPIs are the clients of one preflight run.
type preflightAPIs struct {
	EKS    preflightEKS
	Lambda preflightLambda
	IAM    preflightIAM
	EC2    preflightEC2
}

// newPreflightAPIs builds the clients, every one sent to endpoint when it is set; tests replace it.
var newPreflightAPIs = func(cfg aws.Config, endpoint string) preflightAPIs {
	var base *string
	if endpoint != "" {
		base = aws.String(endpoint)
	}
	return preflightAPIs{
		EKS: eks.NewFromConfig(cfg, func(o *eks.Options) {
			if base != nil {
				o.BaseEndpoint = base
			}
		}),
		Lambda: lambda.NewFromConfig(cfg, func(o *lambda.Options) {
			if base != nil {
				o.BaseEndpoint = base
			}
		}),
		IAM: iam.NewFromConfig(cfg, func(o *iam.Options) {
			if base != nil {
				o.BaseEndpoint = base
			}
		}),
		EC2: ec2.NewFromConfig(cfg, func(o *ec2.Options) {
			if base != nil {
				o.BaseEndpoint = base
			}
		}),
	}
}

// clusterFacts is what eks:DescribeCluster says about the cluster; "" where EKS did not report a value.
type clusterFacts struct {
	Name, Status, Version       string
	PublicAccess, PrivateAccess bool
	PublicAccessCIDRs           []string
	AuthenticationMode          string
	IPFamily                    string
	EgressMode                  string
	VpcID                       string
	SubnetIDs                   []string
	ClusterSecurityGroup        string
	ControlPlaneSecurityGroups  []string
}

// errClusterNotFound is a cluster that does not exist in the region.
var errClusterNotFound = errors.New("not found")

func readCluster(ctx context.Context, api preflightEKS, name string) (clusterFacts, error) {
	out, err := api.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(name)})
	if err != nil {
		var nf *ekstypes.ResourceNotFoundException
		if errors.As(err, &nf) {
			return clusterFacts{}, fmt.Errorf("EKS cluster %s: %w", name, errClusterNotFound)
		}
		return clusterFacts{}, fmt.Errorf("describing EKS cluster %s: %w", name, err)
	}
	c := out.Cluster
	if c == nil {
		return clusterFacts{}, fmt.Errorf("describing EKS cluster %s: empty answer", name)
	}
	f := clusterFacts{Name: name, Status: string(c.Status), Version: aws.ToString(c.Version)}
	if v := c.ResourcesVpcConfig; v != nil {
		f.PublicAccess, f.PrivateAccess, f.PublicAccessCIDRs = v.EndpointPublicAccess, v.EndpointPrivateAccess, v.PublicAccessCidrs
		f.EgressMode = string(v.ControlPlaneEgressMode)
		f.VpcID, f.SubnetIDs = aws.ToString(v.VpcId), v.SubnetIds
		f.ClusterSecurityGroup, f.ControlPlaneSecurityGroups = aws.ToString(v.ClusterSecurityGroupId), v.SecurityGroupIds
	}
	if c.AccessConfig != nil {
		f.AuthenticationMode = string(c.AccessConfig.AuthenticationMode)
	}
	if c.KubernetesNetworkConfig != nil {
		f.IPFamily = string(c.KubernetesNetworkConfig.IpFamily)
	}
	return f, nil
}

// accountFacts is what the account and region say; each Err is a read that failed (the item is then
// reported as not checked).
type accountFacts struct {
	Region string
	// UnreservedConcurrency is lambda:GetAccountSettings' AccountLimit.UnreservedConcurrentExecutions.
	UnreservedConcurrency int32
	ConcurrencyErr        error
	// SpotRole is whether the AWSServiceRoleForEC2Spot service-linked role exists.
	SpotRole    bool
	SpotRoleErr error
	// AccessGroups are the Nodewright groups (nodewright:<function>) that the cluster's access entries
	// carry; AccessErr a failed read; AccessNotChecked why the entries were not read.
	AccessGroups     map[string]bool
	AccessErr        error
	AccessNotChecked string
	// VPC is what EC2 says about the subnets and security groups the settings name.
	VPC vpcFacts
}

// vpcFacts describes the settings' subnets and security groups; the maps miss the ids EC2 does not know.
type vpcFacts struct {
	SubnetVPC map[string]string
	GroupVPC  map[string]string
	// AcceptedOn443 are the settings' groups that a control-plane security group's ingress lets in on 443.
	AcceptedOn443 map[string]bool
	Err           error
	// SubnetEgress is how each subnet's default route leaves the VPC; EgressErr a failed read.
	SubnetEgress map[string]subnetEgress
	EgressErr    error
}

const spotServiceLinkedRole = "AWSServiceRoleForEC2Spot"

func readAccount(ctx context.Context, apis preflightAPIs, region string, c clusterFacts, s preflightSettings) accountFacts {
	a := accountFacts{Region: region}
	if out, err := apis.Lambda.GetAccountSettings(ctx, &lambda.GetAccountSettingsInput{}); err != nil {
		a.ConcurrencyErr = err
	} else if out.AccountLimit == nil || out.AccountLimit.UnreservedConcurrentExecutions == nil {
		a.ConcurrencyErr = errors.New("lambda:GetAccountSettings reported no unreserved concurrency")
	} else {
		a.UnreservedConcurrency = *out.AccountLimit.UnreservedConcurrentExecutions
	}
	_, err := apis.IAM.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(spotServiceLinkedRole)})
	var missing *iamtypes.NoSuchEntityException
	switch {
	case err == nil:
		a.SpotRole = true
	case !errors.As(err, &missing):
		a.SpotRoleErr = err
	}
	a.AccessGroups, a.AccessNotChecked, a.AccessErr = readAccessGroups(ctx, apis.EKS, c)
	if len(s.SubnetIDs) > 0 || len(s.SecurityGroupIDs) > 0 {
		a.VPC = readVPC(ctx, apis.EC2, c, s)
	}
	return a
}

// stackRolePrefix starts the name of every role the stack creates: CloudFormation names a role it
// generates <stack name>-<logical id>-<suffix>, and the stack is Nodewright-<cluster>.
const stackRolePrefix = ":role/Nodewright-"

// readAccessGroups lists the cluster's access entries and describes those of roles the stack may have
// created, returning the Nodewright groups they carry. Entries need an authentication mode with the API.
func readAccessGroups(ctx context.Context, api preflightEKS, c clusterFacts) (map[string]bool, string, error) {
	if c.AuthenticationMode == string(ekstypes.AuthenticationModeConfigMap) {
		return nil, "the authentication mode CONFIG_MAP has no access entries", nil
	}
	groups := map[string]bool{}
	var next *string
	for {
		out, err := api.ListAccessEntries(ctx, &eks.ListAccessEntriesInput{ClusterName: aws.String(c.Name), NextToken: next})
		if err != nil {
			return nil, "", fmt.Errorf("eks:ListAccessEntries: %w", err)
		}
		for _, arn := range out.AccessEntries {
			if !strings.Contains(arn, stackRolePrefix) {
				continue
			}
			e, err := api.DescribeAccessEntry(ctx, &eks.DescribeAccessEntryInput{ClusterName: aws.String(c.Name), PrincipalArn: aws.String(arn)})
			if err != nil {
				return nil, "", fmt.Errorf("eks:DescribeAccessEntry %s: %w", arn, err)
			}
			if e.AccessEntry == nil {
				continue
			}
			for _, g := range e.AccessEntry.KubernetesGroups {
				for _, f := range footprint.Functions() {
					if g == f.Group() {
						groups[g] = true
					}
				}
			}
		}
		if next = out.NextToken; next == nil {
			return groups, "", nil
		}
	}
}

// readVPC finds the VPC of each subnet and security group the settings name, and which of the groups
// the cluster's security groups accept on 443.
func readVPC(ctx context.Context, api preflightEC2, c clusterFacts, s preflightSettings) vpcFacts {
	v := vpcFacts{SubnetVPC: map[string]string{}, GroupVPC: map[string]string{}, AcceptedOn443: map[string]bool{}}
	if len(s.SubnetIDs) > 0 {
		out, err := api.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{Filters: []ec2types.Filter{{Name: aws.String("subnet-id"), Values: s.SubnetIDs}}})
		if err != nil {
			v.Err = fmt.Errorf("ec2:DescribeSubnets: %w", err)
			return v
		}
		vpc := c.VpcID
		for _, sn := range out.Subnets {
			v.SubnetVPC[aws.ToString(sn.SubnetId)] = aws.ToString(sn.VpcId)
			if vpc == "" {
				vpc = aws.ToString(sn.VpcId)
			}
		}
		if vpc != "" {
			v.SubnetEgress, v.EgressErr = readSubnetEgress(ctx, api, vpc, s.SubnetIDs)
		}
	}
	ids := append(append([]string{}, s.SecurityGroupIDs...), c.ControlPlaneSecurityGroups...)
	if c.ClusterSecurityGroup != "" {
		ids = append(ids, c.ClusterSecurityGroup)
	}
	if len(ids) == 0 {
		return v
	}
	out, err := api.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{Filters: []ec2types.Filter{{Name: aws.String("group-id"), Values: ids}}})
	if err != nil {
		v.Err = fmt.Errorf("ec2:DescribeSecurityGroups: %w", err)
		return v
	}
	ours := map[string]bool{}
	for _, id := range s.SecurityGroupIDs {
		ours[id] = true
	}
	controlPlane := map[string]bool{c.ClusterSecurityGroup: c.ClusterSecurityGroup != ""}
	for _, id := range c.ControlPlaneSecurityGroups {
		controlPlane[id] = true
	}
	for _, g := range out.SecurityGroups {
		id := aws.ToString(g.GroupId)
		if ours[id] {
			v.GroupVPC[id] = aws.ToString(g.VpcId)
		}
		if !controlPlane[id] {
			continue
		}
		for _, p := range g.IpPermissions {
			if !coversHTTPS(p) {
				continue
			}
			for _, pair := range p.UserIdGroupPairs {
				if src := aws.ToString(pair.GroupId); ours[src] {
					v.AcceptedOn443[src] = true
				}
			}
		}
	}
	return v
}

// coversHTTPS reports whether an ingress permission lets TCP 443 in: all traffic, or a TCP range with 443.
func coversHTTPS(p ec2types.IpPermission) bool {
	switch aws.ToString(p.IpProtocol) {
	case "-1":
		return true
	case "tcp", "6":
		return aws.ToInt32(p.FromPort) <= 443 && 443 <= aws.ToInt32(p.ToPort)
	}
	return false
}
