package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// subnetEgress is how a subnet's default IPv4 route leaves the VPC, as far as the functions are concerned.
type subnetEgress string

const (
	egressNAT   subnetEgress = "NAT gateway"
	egressOther subnetEgress = "routed" // a transit gateway, appliance or peering: preflight cannot see past it
	// egressIGW is a public subnet: Lambda's network interfaces get no public address there, so an
	// internet gateway takes the functions nowhere.
	egressIGW  subnetEgress = "internet gateway only"
	egressNone subnetEgress = "no default route"
)

// readSubnetEgress classifies each subnet's default route: its own route table's, else the VPC's main one.
func readSubnetEgress(ctx context.Context, api preflightEC2, vpcID string, subnets []string) (map[string]subnetEgress, error) {
	out, err := api.DescribeRouteTables(ctx, &ec2.DescribeRouteTablesInput{Filters: []ec2types.Filter{{Name: aws.String("vpc-id"), Values: []string{vpcID}}}})
	if err != nil {
		return nil, fmt.Errorf("ec2:DescribeRouteTables: %w", err)
	}
	var main *ec2types.RouteTable
	bySubnet := map[string]*ec2types.RouteTable{}
	for i := range out.RouteTables {
		rt := &out.RouteTables[i]
		for _, a := range rt.Associations {
			if aws.ToBool(a.Main) {
				main = rt
			}
			if a.SubnetId != nil {
				bySubnet[*a.SubnetId] = rt
			}
		}
	}
	egress := map[string]subnetEgress{}
	for _, s := range subnets {
		rt := bySubnet[s]
		if rt == nil {
			rt = main
		}
		egress[s] = defaultRoute(rt)
	}
	return egress, nil
}

func defaultRoute(rt *ec2types.RouteTable) subnetEgress {
	if rt == nil {
		return egressNone
	}
	for _, r := range rt.Routes {
		if aws.ToString(r.DestinationCidrBlock) != "0.0.0.0/0" || r.State == ec2types.RouteStateBlackhole {
			continue
		}
		switch {
		case r.NatGatewayId != nil:
			return egressNAT
		case strings.HasPrefix(aws.ToString(r.GatewayId), "igw-"):
			return egressIGW
		default:
			return egressOther
		}
	}
	return egressNone
}

// judgeSubnetEgress decides whether the functions in the subnets reach the AWS APIs they call: through a
// NAT gateway (or another route preflight cannot follow), or through the VPC endpoints vpcEndpoints
// creates; isolatedVPC keeps them off the Pricing API, which has no endpoint in most regions.
func judgeSubnetEgress(v vpcFacts, s preflightSettings) finding {
	f := finding{Item: "subnet egress"}
	if len(s.SubnetIDs) == 0 {
		f.Verdict, f.Detail = works, "the functions run outside any VPC and reach AWS APIs directly"
		return f
	}
	if err := errors.Join(v.Err, v.EgressErr); err != nil {
		f.Verdict, f.Detail = notChecked, err.Error()
		return f
	}
	var closed, open []string
	for _, id := range s.SubnetIDs {
		e, ok := v.SubnetEgress[id]
		if !ok {
			continue // a subnet EC2 does not know: VPC settings names it
		}
		if e == egressNAT || e == egressOther {
			open = append(open, id+" ("+string(e)+")")
		} else {
			closed = append(closed, id+" ("+string(e)+")")
		}
	}
	sort.Strings(closed)
	switch {
	case len(closed) == 0 && len(open) == 0:
		f.Verdict, f.Detail = notChecked, "EC2 knows none of the subnets"
	case len(closed) == 0:
		f.Verdict, f.Detail = works, "every subnet has a way out: "+strings.Join(open, ", ")
	case !s.VPCEndpoints:
		f.Verdict, f.Set = willNotWork, []string{ctxEndpoints + "=true", ctxIsolated + "=true"}
		f.Detail = "the functions in " + strings.Join(closed, ", ") + " cannot reach EC2, SQS, DynamoDB and the other AWS APIs " +
			"(Lambda gives them no public address): add a NAT gateway route, or create VPC endpoints"
	case !s.IsolatedVPC:
		f.Verdict, f.Set = warning, []string{ctxIsolated + "=true"}
		f.Detail = "the VPC endpoints serve " + strings.Join(closed, ", ") + ", but the Pricing API has none: price refreshes fail " +
			"there unless isolated mode uses the shipped price table"
	default:
		f.Verdict, f.Detail = works, "isolated: "+strings.Join(closed, ", ")+" use the VPC endpoints and the shipped price table"
	}
	return f
}
