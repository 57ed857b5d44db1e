package sandbox

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// KarpenterNodePool is the NodePool of the Karpenter-launched capacity in the coexistence scenario: a
// pool Nodewright's configuration does not have (during a migration the two sides own disjoint pools).
const KarpenterNodePool = "karpenter-general"

// What Karpenter v1 puts on its instances and Nodes. Nodewright must never touch an instance or Node
// because it carries these.
const (
	karpenterTagNodePool  = instance.KarpenterTagNodePool
	karpenterTagNodeClass = instance.KarpenterTagNodeClass
	karpenterTagNodeClaim = instance.KarpenterTagNodeClaim
	// karpenterTagLTCluster is the cluster tag Karpenter v1.0 puts on its launch templates.
	karpenterTagLTCluster = instance.KarpenterTagTemplateCluster
	eksTagClusterName     = instance.TagEKSClusterName
	karpenterFinalizer    = "karpenter.sh/termination"
)

// kubernetesClusterTag is the kubernetes.io/cluster/<name> tag key (value "owned").
var kubernetesClusterTag = instance.ClusterTagKey

// foreignCapacity is what Karpenter launched: instance ids, their Nodes, and the app running on them.
type foreignCapacity struct {
	Instances []string
	Nodes     []string
	App       string
	Replicas  int
}

// karpenterInstanceType is what the Karpenter pool runs: one foreign app pod fills one (1.93 CPU
// allocatable, 1.5 CPU per pod), so Nodewright's pods do not land on Karpenter's nodes.
const karpenterInstanceType = "m5.large"

// launchKarpenterCapacity does what Karpenter v1 does for a NodePool of its own: an instance per zone
// (up to n), tagged as Karpenter tags them, a Ready Node for each with Karpenter's labels, its
// termination finalizer and the instance's provider id, and a deployment selecting the pool, running.
func (s *Sandbox) launchKarpenterCapacity(ctx context.Context, n int, namespace string) (foreignCapacity, error) {
	fc := foreignCapacity{App: "karpenter-app", Replicas: n}
	for i := 0; i < n; i++ {
		id, name, err := s.launchKarpenterNode(ctx, fmt.Sprintf("%s-k%04d", KarpenterNodePool, i), Zones[i%len(Zones)], nil)
		if err != nil {
			return fc, err
		}
		fc.Instances, fc.Nodes = append(fc.Instances, id), append(fc.Nodes, name)
	}
	deploy := pauseDeployment(fc.App, namespace, int32(n), "1500m", "1Gi", map[string]string{scheduling.LabelNodePool: KarpenterNodePool})
	if _, err := s.Client.AppsV1().Deployments(namespace).Create(ctx, deploy, metav1.CreateOptions{}); err != nil {
		return fc, fmt.Errorf("creating the %s deployment: %w", fc.App, err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		running, _, err := s.podsRunning(ctx, namespace, fc.App, "")
		if err != nil {
			return fc, err
		}
		if running >= n {
			s.Timeline.Printf("karpenter", "deployment %s: %d pods running on Karpenter's nodes", fc.App, running)
			return fc, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fc, fmt.Errorf("only %d of %d %s pods running on Karpenter's nodes after a minute", running, n, fc.App)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// launchKarpenterNode launches one instance of Karpenter's NodePool in zone for its NodeClaim claim,
// tagged as Karpenter tags them, and registers its Ready Node with Karpenter's labels (and extra), its
// termination finalizer and the instance's provider id. It returns the instance id and the Node name.
func (s *Sandbox) launchKarpenterNode(ctx context.Context, claim, zone string, extra map[string]string) (string, string, error) {
	image, err := s.EC2.DescribeImages(ctx, &ec2.DescribeImagesInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag:nodewright.sh/sandbox-ami"), Values: []string{"true"}}}})
	if err != nil || len(image.Images) == 0 {
		return "", "", fmt.Errorf("finding the node AMI for Karpenter's instances: %v", err)
	}
	info, ok := s.agent.types[karpenterInstanceType]
	if !ok {
		return "", "", fmt.Errorf("instance type %s is not in the catalog", karpenterInstanceType)
	}
	subnets, err := s.EC2.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{Filters: []ec2types.Filter{
		{Name: aws.String("availability-zone"), Values: []string{zone}},
		{Name: aws.String("tag:karpenter.sh/discovery"), Values: []string{Cluster}}}})
	if err != nil || len(subnets.Subnets) == 0 {
		return "", "", fmt.Errorf("finding the subnet in %s: %v", zone, err)
	}
	tags := map[string]string{
		kubernetesClusterTag(Cluster): "owned", eksTagClusterName: Cluster, karpenterTagNodePool: KarpenterNodePool,
		karpenterTagNodeClass: "default", karpenterTagNodeClaim: claim, "Name": KarpenterNodePool + "/" + claim,
	}
	var tagList []ec2types.Tag
	for k, v := range tags {
		tagList = append(tagList, ec2types.Tag{Key: aws.String(k), Value: aws.String(v)})
	}
	out, err := s.EC2.RunInstances(ctx, &ec2.RunInstancesInput{ImageId: image.Images[0].ImageId, MinCount: aws.Int32(1), MaxCount: aws.Int32(1),
		InstanceType: ec2types.InstanceType(karpenterInstanceType), SubnetId: subnets.Subnets[0].SubnetId,
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeInstance, Tags: tagList},
			{ResourceType: ec2types.ResourceTypeVolume, Tags: tagList}}})
	if err != nil {
		return "", "", fmt.Errorf("launching Karpenter's instance in %s: %w", zone, err)
	}
	inst := out.Instances[0]
	id := aws.ToString(inst.InstanceId)
	s.agent.markForeign(id) // before its boot delay is up: the agent must never join it as Nodewright's
	name := aws.ToString(inst.PrivateDnsName)
	labels := scheduling.AWSLabels(info, scheduling.NodeClassConfig{})
	for k, v := range map[string]string{
		corev1.LabelHostname: name, corev1.LabelInstanceTypeStable: karpenterInstanceType,
		corev1.LabelTopologyZone: zone, corev1.LabelTopologyRegion: zone[:len(zone)-1],
		scheduling.LabelNodePool: KarpenterNodePool, scheduling.LabelEC2NodeClass: "default",
		scheduling.LabelCapacityType:   scheduling.CapacityTypeOnDemand,
		scheduling.LabelNodeRegistered: "true", scheduling.LabelNodeInitalized: "true",
	} {
		labels[k] = v
	}
	maps.Copy(labels, extra)
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Finalizers: []string{karpenterFinalizer}},
		Spec: corev1.NodeSpec{ProviderID: "aws:///" + zone + "/" + id}}
	if err := s.agent.joinForeign(ctx, inst, node); err != nil {
		return "", "", fmt.Errorf("registering Karpenter's Node %s: %w", name, err)
	}
	s.Timeline.Printf("karpenter", "instance %s (%s, %s, NodePool %s, NodeClaim %s) registered as Node %s", id, karpenterInstanceType, zone,
		KarpenterNodePool, claim, name)
	return id, name, nil
}

// foreignInstancesTerminated counts the foreign instances that are no longer running.
func (s *Sandbox) foreignInstancesTerminated(ctx context.Context, ids []string) (int, error) {
	out, err := s.EC2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: ids})
	if err != nil {
		return 0, err
	}
	gone := 0
	for _, r := range out.Reservations {
		for _, i := range r.Instances {
			if i.State.Name != ec2types.InstanceStateNameRunning {
				gone++
			}
		}
	}
	return gone, nil
}

// ownInstancesMatchingKarpenterDiscovery lists the live instances that are not foreign (listed in foreign
// or launched as another provisioner's) and that Karpenter's garbage collection would list: Nodewright's
// instances Karpenter would terminate.
func (s *Sandbox) ownInstancesMatchingKarpenterDiscovery(ctx context.Context, foreign []string) ([]string, error) {
	skip := map[string]bool{}
	for _, id := range foreign {
		skip[id] = true
	}
	var ids []string
	pages := ec2.NewDescribeInstancesPaginator(s.EC2, &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
		{Name: aws.String("instance-state-name"), Values: []string{"pending", "running", "stopping", "stopped"}}}})
	for pages.HasMorePages() {
		out, err := pages.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, r := range out.Reservations {
			for _, i := range r.Instances {
				tags := map[string]string{}
				for _, t := range i.Tags {
					tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
				}
				// Judged on the tags rather than with Karpenter's DescribeInstances filters: moto keeps only
				// the last of several filters of one name (two tag-key filters), so it would answer a
				// different question than EC2 does.
				if id := aws.ToString(i.InstanceId); !skip[id] && !s.agent.isForeign(id) && instance.KarpenterCollectsInstance(tags, Cluster) {
					skip[id] = true
					ids = append(ids, id)
				}
			}
		}
	}
	return ids, nil
}

// ownLaunchTemplatesMatchingKarpenterDiscovery counts the launch templates Karpenter's launch-template
// garbage collection would delete: tagged eks:eks-cluster-name=<cluster> (v1.1+) or carrying
// karpenter.k8s.aws/cluster (v1.0). Every launch template in the sandbox is Nodewright's.
func (s *Sandbox) ownLaunchTemplatesMatchingKarpenterDiscovery(ctx context.Context) (int, error) {
	seen := map[string]bool{}
	for _, f := range []ec2types.Filter{
		{Name: aws.String("tag:" + eksTagClusterName), Values: []string{Cluster}},
		{Name: aws.String("tag-key"), Values: []string{karpenterTagLTCluster}},
	} {
		out, err := s.EC2.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{Filters: []ec2types.Filter{f}})
		if err != nil {
			return 0, err
		}
		for _, lt := range out.LaunchTemplates {
			seen[aws.ToString(lt.LaunchTemplateId)] = true
		}
	}
	return len(seen), nil
}
