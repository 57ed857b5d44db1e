package scalebench

import (
	"context"
	"fmt"
	"sort"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/testsupport/sandbox"
)

// launchSpec is a node's instance as the loader asks moto for it.
type launchSpec struct {
	Shape                        shape
	Zone, CapacityType, NodePool string
	Claim                        string
}

// network is the sandbox VPC's subnet per zone and the node AMI.
type network struct {
	subnets map[string]string
	image   string
}

func findNetwork(ctx context.Context, e *ec2.Client) (network, error) {
	n := network{subnets: map[string]string{}}
	subnets, err := e.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{Filters: []ec2types.Filter{{Name: aws.String("tag:karpenter.sh/discovery"), Values: []string{"sandbox"}}}})
	if err != nil {
		return n, fmt.Errorf("finding the subnets: %w", err)
	}
	for _, s := range subnets.Subnets {
		n.subnets[aws.ToString(s.AvailabilityZone)] = aws.ToString(s.SubnetId)
	}
	images, err := e.DescribeImages(ctx, &ec2.DescribeImagesInput{Filters: []ec2types.Filter{{Name: aws.String("tag:" + sandbox.SampleAMITag), Values: []string{"true"}}}})
	if err != nil || len(images.Images) == 0 {
		return n, fmt.Errorf("finding the node AMI: %v", err)
	}
	n.image = aws.ToString(images.Images[0].ImageId)
	return n, nil
}

// runInstances starts one moto instance per spec, tagged as Nodewright's launcher tags its own (the
// claim tag included), and returns them in the specs' order. Specs of one type, zone and capacity type
// are launched together.
func runInstances(ctx context.Context, e *ec2.Client, specs []launchSpec) ([]Instance, error) {
	net, err := findNetwork(ctx, e)
	if err != nil {
		return nil, err
	}
	type group struct{ shape, zone, capacity string }
	byGroup := map[group][]int{}
	var groups []group
	for i, s := range specs {
		g := group{s.Shape.Name, s.Zone, s.CapacityType}
		if _, ok := byGroup[g]; !ok {
			groups = append(groups, g)
		}
		byGroup[g] = append(byGroup[g], i)
	}
	sort.Slice(groups, func(i, j int) bool { return fmt.Sprint(groups[i]) < fmt.Sprint(groups[j]) })
	out := make([]Instance, len(specs))
	for _, g := range groups {
		idx := byGroup[g]
		for len(idx) > 0 {
			n := min(len(idx), 200)
			in := &ec2.RunInstancesInput{ImageId: aws.String(net.image), InstanceType: ec2types.InstanceType(g.shape),
				MinCount: aws.Int32(int32(n)), MaxCount: aws.Int32(int32(n)), SubnetId: aws.String(net.subnets[g.zone]),
				Placement: &ec2types.Placement{AvailabilityZone: aws.String(g.zone)},
				TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeInstance, Tags: []ec2types.Tag{
					{Key: aws.String(instance.TagCluster), Value: aws.String(Cluster)},
					{Key: aws.String(instance.ClusterTagKey(Cluster)), Value: aws.String("owned")},
					{Key: aws.String(instance.TagNodeClass), Value: aws.String("default")},
				}}}}
			if g.capacity == instance.CapacityTypeSpot {
				in.InstanceMarketOptions = &ec2types.InstanceMarketOptionsRequest{MarketType: ec2types.MarketTypeSpot}
			}
			res, err := e.RunInstances(ctx, in)
			if err != nil {
				return nil, fmt.Errorf("running %d %s in %s: %w", n, g.shape, g.zone, err)
			}
			if len(res.Instances) != n {
				return nil, fmt.Errorf("running %d %s in %s: moto started %d", n, g.shape, g.zone, len(res.Instances))
			}
			for k, inst := range res.Instances {
				out[idx[k]] = Instance{ID: aws.ToString(inst.InstanceId), PrivateIP: aws.ToString(inst.PrivateIpAddress), PrivateDNS: aws.ToString(inst.PrivateDnsName)}
			}
			idx = idx[n:]
		}
	}
	err = parallel(ctx, len(specs), 8, func(ctx context.Context, i int) error {
		// Named after their Nodes already, as the lifecycle names a cluster's instances once they joined:
		// the measured sweeps are a steady cluster's, not the one-off naming after an upgrade.
		_, err := e.CreateTags(ctx, &ec2.CreateTagsInput{Resources: []string{out[i].ID}, Tags: []ec2types.Tag{
			{Key: aws.String(instance.TagNodePool), Value: aws.String(specs[i].NodePool)},
			{Key: aws.String(instance.KarpenterTagNodePool), Value: aws.String(specs[i].NodePool)},
			{Key: aws.String(instance.TagNodeClaim), Value: aws.String(specs[i].Claim)},
			{Key: aws.String(instance.TagName), Value: aws.String(out[i].PrivateDNS)}}})
		return err
	})
	return out, err
}
