package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/testsupport/awstest"
)

const (
	cluster = "demo"
	region  = "us-east-1"
)

// config is the NodePool and EC2NodeClass the test provisions from: amd64 c/m/r types, spot and
// on-demand, our own tagged AMI.
const config = `
apiVersion: karpenter.sh/v1
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
        - key: karpenter.sh/capacity-type
          operator: In
          values: ["spot", "on-demand"]
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: default
spec:
  amiFamily: AL2023
  role: KarpenterNodeRole-demo
  amiSelectorTerms:
    - tags:
        team: platform
  subnetSelectorTerms:
    - tags:
        karpenter.sh/discovery: demo
  securityGroupSelectorTerms:
    - tags:
        karpenter.sh/discovery: demo
`

// aws is the moto side of the test.
type awsWorld struct {
	cfg   aws.Config
	ec2   *ec2.Client
	iam   *iam.Client
	ssm   *ssm.Client
	store *state.Store
}

// newAWSWorld builds, in a fresh moto: a VPC with tagged subnets in two zones, a tagged security group, a
// tagged image made from a moto x86_64 image, the node role, and the state table holding config.
func newAWSWorld(t testing.TB) awsWorld {
	t.Helper()
	ctx := context.Background()
	moto := awstest.Shared(t)
	cfg := moto.Config()
	w := awsWorld{cfg: cfg, ec2: ec2.NewFromConfig(cfg), iam: iam.NewFromConfig(cfg), ssm: ssm.NewFromConfig(cfg)}
	discovery := func(resource ec2types.ResourceType, kv ...string) []ec2types.TagSpecification {
		var tags []ec2types.Tag
		for i := 0; i < len(kv); i += 2 {
			tags = append(tags, ec2types.Tag{Key: aws.String(kv[i]), Value: aws.String(kv[i+1])})
		}
		return []ec2types.TagSpecification{{ResourceType: resource, Tags: tags}}
	}
	vpc, err := w.ec2.CreateVpc(ctx, &ec2.CreateVpcInput{CidrBlock: aws.String("10.0.0.0/16")})
	require.NoError(t, err)
	for i, zone := range []string{"us-east-1a", "us-east-1b"} {
		_, err := w.ec2.CreateSubnet(ctx, &ec2.CreateSubnetInput{VpcId: vpc.Vpc.VpcId, CidrBlock: aws.String(fmt.Sprintf("10.0.%d.0/20", 16*i)),
			AvailabilityZone: aws.String(zone), TagSpecifications: discovery(ec2types.ResourceTypeSubnet, "karpenter.sh/discovery", cluster)})
		require.NoError(t, err)
	}
	_, err = w.ec2.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{GroupName: aws.String("nodes"), Description: aws.String("nodes"),
		VpcId: vpc.Vpc.VpcId, TagSpecifications: discovery(ec2types.ResourceTypeSecurityGroup, "karpenter.sh/discovery", cluster)})
	require.NoError(t, err)

	images, err := w.ec2.DescribeImages(ctx, &ec2.DescribeImagesInput{Owners: []string{"amazon"},
		Filters: []ec2types.Filter{{Name: aws.String("architecture"), Values: []string{"x86_64"}}}})
	require.NoError(t, err)
	require.NotEmpty(t, images.Images, "moto ships x86_64 images")
	base, err := w.ec2.RunInstances(ctx, &ec2.RunInstancesInput{ImageId: images.Images[0].ImageId, MinCount: aws.Int32(1), MaxCount: aws.Int32(1)})
	require.NoError(t, err)
	_, err = w.ec2.CreateImage(ctx, &ec2.CreateImageInput{InstanceId: base.Instances[0].InstanceId, Name: aws.String("golden-eks-node"),
		TagSpecifications: discovery(ec2types.ResourceTypeImage, "team", "platform")})
	require.NoError(t, err)
	_, err = w.ec2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{aws.ToString(base.Instances[0].InstanceId)}})
	require.NoError(t, err)
	_, err = w.iam.CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String("KarpenterNodeRole-demo"),
		AssumeRolePolicyDocument: aws.String(`{"Version":"2012-10-17","Statement":[]}`)})
	require.NoError(t, err)

	db := state.NewClient(cfg)
	_, err = db.CreateTable(ctx, state.CreateTableInput("state"))
	require.NoError(t, err)
	w.store = state.New(db, "state")
	w.applyConfig(t, config)
	return w
}

// applyConfig validates NodePools and EC2NodeClasses and adds them to the stored configuration,
// keeping what is there.
func (w awsWorld) applyConfig(t testing.TB, yaml string) {
	t.Helper()
	objs, err := apis.Decode("config.yaml", []byte(yaml))
	require.NoError(t, err)
	require.Empty(t, apis.DefaultAndValidate(objs))
	items, err := state.ConfigItemsFrom(objs)
	require.NoError(t, err)
	_, err = w.store.ApplyConfig(context.Background(), items, false)
	require.NoError(t, err)
}

// claimedInstances lists the live instances tagged with a claim, by claim name.
func (w awsWorld) claimedInstances(t *testing.T) map[string]ec2types.Instance {
	t.Helper()
	out, err := w.ec2.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag-key"), Values: []string{instance.TagNodeClaim}},
		{Name: aws.String("instance-state-name"), Values: []string{"pending", "running"}},
	}})
	require.NoError(t, err)
	found := map[string]ec2types.Instance{}
	for _, r := range out.Reservations {
		for _, inst := range r.Instances {
			for _, tag := range inst.Tags {
				if aws.ToString(tag.Key) == instance.TagNodeClaim {
					found[aws.ToString(tag.Value)] = inst
				}
			}
		}
	}
	return found
}

// testCA stands in for the cluster CA bundle (user data only carries it).
var testCA = base64.StdEncoding.EncodeToString([]byte("-----BEGIN CERTIFICATE-----\ntest\n-----END CERTIFICATE-----\n"))

// createPendingPods creates n pods of 1 CPU and 1.5Gi and waits until kube-scheduler has marked each
// one Unschedulable (there is no node to bind them to).
func createPendingPods(t *testing.T, c kubernetes.Interface, ns string, n int) {
	t.Helper()
	ctx := context.Background()
	for i := 0; i < n; i++ {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("inflate-%d", i), Namespace: ns},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1536Mi")}}}}}}
		_, err := c.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	awaitUnschedulable(t, c, ns, n)
}

// awaitUnschedulable waits until kube-scheduler has marked n pods of namespace ns Unschedulable.
func awaitUnschedulable(t *testing.T, c kubernetes.Interface, ns string, n int) {
	t.Helper()
	ctx := context.Background()
	require.Eventually(t, func() bool {
		pods, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		marked := 0
		for _, p := range pods.Items {
			for _, cond := range p.Status.Conditions {
				if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse && cond.Reason == corev1.PodReasonUnschedulable {
					marked++
				}
			}
		}
		return marked == n
	}, 60*time.Second, 200*time.Millisecond, "kube-scheduler marks every pod Unschedulable")
}
