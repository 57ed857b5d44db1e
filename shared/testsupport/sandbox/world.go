package sandbox

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
)

// Zones are the sandbox VPC's availability zones, one tagged subnet each.
var Zones = []string{"us-east-1a", "us-east-1b", "us-east-1c"}

// SampleConfig is the NodePool and EC2NodeClass the scenarios provision from, as an administrator would
// write them for Karpenter: amd64 c/m/r types of generation 5 or later, spot and on-demand,
// subnets and security groups by discovery tag, and an AMI selected by tag (moto has no EKS AMI parameters).
const SampleConfig = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  template:
    spec:
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: default
      requirements:
        - key: kubernetes.io/arch
          operator: In
          values: ["amd64"]
        - key: karpenter.k8s.aws/instance-category
          operator: In
          values: ["c", "m", "r"]
        - key: karpenter.k8s.aws/instance-generation
          operator: Gt
          values: ["4"]
        - key: karpenter.sh/capacity-type
          operator: In
          values: ["spot", "on-demand"]
  limits:
    cpu: "1000"
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 1m
---
` + SampleNodeClass

// Queues are the URLs of the sandbox's queues, as the CDK app creates them: the three work queues and
// the disruption function's wake queue.
type Queues struct {
	Provisioning, Interruption, Termination, DisruptionWake string
}

// BuildAWS is buildAWS for harnesses beside the sandbox (the scale bench): the same account set-up, with
// config as the NodePools and EC2NodeClasses. Subnets and the security group are tagged
// karpenter.sh/discovery: sandbox and the AMI SampleAMITag, whatever cluster is.
func BuildAWS(ctx context.Context, cfg aws.Config, cluster, table, config string) (Queues, error) {
	return buildAWS(ctx, cfg, cluster, table, config)
}

// buildAWS creates what the CDK app and the administrator's account provide: the VPC, tagged subnets and
// security group, a tagged AMI, the node role, the state table holding the configuration, and the queues.
func buildAWS(ctx context.Context, cfg aws.Config, cluster, table, config string) (Queues, error) {
	e := ec2.NewFromConfig(cfg)
	tag := func(rt ec2types.ResourceType, k, v string) []ec2types.TagSpecification {
		return []ec2types.TagSpecification{{ResourceType: rt, Tags: []ec2types.Tag{{Key: aws.String(k), Value: aws.String(v)}}}}
	}
	vpc, err := e.CreateVpc(ctx, &ec2.CreateVpcInput{CidrBlock: aws.String("10.0.0.0/16")})
	if err != nil {
		return Queues{}, fmt.Errorf("creating the VPC: %w", err)
	}
	for i, zone := range Zones {
		if _, err := e.CreateSubnet(ctx, &ec2.CreateSubnetInput{VpcId: vpc.Vpc.VpcId, CidrBlock: aws.String(fmt.Sprintf("10.0.%d.0/20", i*16)),
			AvailabilityZone: aws.String(zone), TagSpecifications: tag(ec2types.ResourceTypeSubnet, "karpenter.sh/discovery", "sandbox")}); err != nil {
			return Queues{}, fmt.Errorf("creating the subnet in %s: %w", zone, err)
		}
	}
	if _, err := e.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{GroupName: aws.String("nodes"), Description: aws.String("nodes"),
		VpcId: vpc.Vpc.VpcId, TagSpecifications: tag(ec2types.ResourceTypeSecurityGroup, "karpenter.sh/discovery", "sandbox")}); err != nil {
		return Queues{}, fmt.Errorf("creating the security group: %w", err)
	}
	if err := tagImage(ctx, e); err != nil {
		return Queues{}, err
	}
	if _, err := iam.NewFromConfig(cfg).CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String("KarpenterNodeRole-sandbox"),
		AssumeRolePolicyDocument: aws.String(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`)}); err != nil {
		return Queues{}, fmt.Errorf("creating the node role: %w", err)
	}
	if err := storeConfig(ctx, cfg, table, config); err != nil {
		return Queues{}, err
	}
	return createQueues(ctx, sqs.NewFromConfig(cfg), cluster)
}

// tagImage makes an x86_64 AMI of the account's own from one of moto's images and tags it for the sample
// EC2NodeClass, as a platform team publishes its golden node image.
func tagImage(ctx context.Context, e *ec2.Client) error {
	_, err := publishImage(ctx, e, "sandbox-eks-node")
	return err
}

// publishImage creates an x86_64 AMI named name from an instance of one of moto's images, tagged for the
// sample EC2NodeClass's amiSelectorTerms, and returns its id.
func publishImage(ctx context.Context, e *ec2.Client, name string) (string, error) {
	images, err := e.DescribeImages(ctx, &ec2.DescribeImagesInput{Owners: []string{"amazon"},
		Filters: []ec2types.Filter{{Name: aws.String("architecture"), Values: []string{"x86_64"}}}})
	if err != nil {
		return "", fmt.Errorf("finding a moto x86_64 image: %w", err)
	}
	if len(images.Images) == 0 {
		return "", fmt.Errorf("moto has no x86_64 image to build the node AMI from")
	}
	base, err := e.RunInstances(ctx, &ec2.RunInstancesInput{ImageId: images.Images[0].ImageId, MinCount: aws.Int32(1), MaxCount: aws.Int32(1)})
	if err != nil {
		return "", fmt.Errorf("starting the image builder instance: %w", err)
	}
	id := aws.ToString(base.Instances[0].InstanceId)
	img, err := e.CreateImage(ctx, &ec2.CreateImageInput{InstanceId: aws.String(id), Name: aws.String(name),
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeImage,
			Tags: []ec2types.Tag{{Key: aws.String(SampleAMITag), Value: aws.String("true")}}}}})
	if err != nil {
		return "", fmt.Errorf("creating the node AMI %s: %w", name, err)
	}
	if _, err := e.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{id}}); err != nil {
		return "", fmt.Errorf("terminating the image builder instance: %w", err)
	}
	return aws.ToString(img.ImageId), nil
}

// SampleAMITag is the tag the sample EC2NodeClass selects its AMIs by.
const SampleAMITag = "nodewright.sh/sandbox-ami"

// SampleNodeClass is the sandbox's EC2NodeClass "default": the AMI, subnets and security groups that
// BuildAWS tags, with Karpenter's sample node role. SampleConfig ends with it; other worlds built with
// BuildAWS (the scale harness) use it beside NodePools of their own.
const SampleNodeClass = `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: default
spec:
  amiFamily: AL2023
  role: KarpenterNodeRole-sandbox
  amiSelectorTerms:
    - tags:
        nodewright.sh/sandbox-ami: "true"
  subnetSelectorTerms:
    - tags:
        karpenter.sh/discovery: sandbox
  securityGroupSelectorTerms:
    - tags:
        karpenter.sh/discovery: sandbox
`

// storeConfig creates the state table and applies the configuration to it, as `cdk deploy` does.
func storeConfig(ctx context.Context, cfg aws.Config, table, config string) error {
	db := state.NewClient(cfg)
	if _, err := db.CreateTable(ctx, state.CreateTableInput(table)); err != nil {
		return fmt.Errorf("creating the state table: %w", err)
	}
	return applyConfig(ctx, state.New(db, table), config)
}

// applyConfig validates config and applies it to the table, as `nodewright apply` does; objects the
// table holds and config does not are kept.
func applyConfig(ctx context.Context, store *state.Store, config string) error {
	objs, err := apis.Decode("sandbox.yaml", []byte(config))
	if err != nil {
		return err
	}
	if errs := apis.DefaultAndValidate(objs); len(errs) > 0 {
		return fmt.Errorf("sandbox configuration: %v", errs)
	}
	items, err := state.ConfigItemsFrom(objs)
	if err != nil {
		return err
	}
	_, err = store.ApplyConfig(ctx, items, false)
	return err
}

// createQueues creates the provisioning FIFO queue, the interruption and termination queues and the
// disruption wake queue.
func createQueues(ctx context.Context, q *sqs.Client, cluster string) (Queues, error) {
	create := func(name string, attrs map[string]string) (string, error) {
		out, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
		if err != nil {
			return "", fmt.Errorf("creating queue %s: %w", name, err)
		}
		return aws.ToString(out.QueueUrl), nil
	}
	names := QueueNames(cluster)
	var qs Queues
	var err error
	if qs.Provisioning, err = create(names.Provisioning, map[string]string{
		string(sqstypes.QueueAttributeNameFifoQueue): "true", string(sqstypes.QueueAttributeNameVisibilityTimeout): "60"}); err != nil {
		return qs, err
	}
	if qs.Interruption, err = create(names.Interruption, map[string]string{string(sqstypes.QueueAttributeNameVisibilityTimeout): "30"}); err != nil {
		return qs, err
	}
	if qs.Termination, err = create(names.Termination, map[string]string{string(sqstypes.QueueAttributeNameVisibilityTimeout): "60"}); err != nil {
		return qs, err
	}
	qs.DisruptionWake, err = create(names.DisruptionWake, map[string]string{string(sqstypes.QueueAttributeNameVisibilityTimeout): "60"})
	return qs, err
}

// QueueNames are the names (not URLs) of the queues a sandbox for cluster creates; infra's IAM proof
// binds the template's queues to them.
func QueueNames(cluster string) Queues {
	return Queues{Provisioning: cluster + "-provisioning.fifo", Interruption: cluster + "-interruption",
		Termination: cluster + "-termination", DisruptionWake: cluster + "-disruption-wake"}
}
