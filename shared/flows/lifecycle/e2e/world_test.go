package e2e

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/nodewright/nodewright/shared/adapters/footprint"
	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/pricing"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/flows/lifecycle"
	"github.com/nodewright/nodewright/shared/flows/termination"
	"github.com/nodewright/nodewright/shared/testsupport/awscalls"
	"github.com/nodewright/nodewright/shared/testsupport/awstest"
	"github.com/nodewright/nodewright/shared/testsupport/kubetest"
)

const (
	cluster = "demo"
	zone    = "us-east-1a"
)

// config has a "gpu" NodePool with labels, a taint and a startup taint, and a plain "default" one.
const config = `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: gpu
spec:
  template:
    metadata:
      labels:
        team: ml
    spec:
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: default
      taints:
        - key: dedicated
          value: gpu
          effect: NoSchedule
      startupTaints:
        - key: node.cilium.io/agent-not-ready
          effect: NoExecute
      requirements:
        - key: karpenter.sh/capacity-type
          operator: In
          values: ["on-demand"]
---
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
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: default
spec:
  amiFamily: AL2023
  role: KarpenterNodeRole-demo
  amiSelectorTerms:
    - alias: al2023@latest
  subnetSelectorTerms:
    - tags:
        karpenter.sh/discovery: demo
  securityGroupSelectorTerms:
    - tags:
        karpenter.sh/discovery: demo
`

// clock is the injected clock, shared by the store and the runner; tests move it.
type clock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *clock) set(offset time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset = offset
}

// env is one test's world: a fresh moto with the state table and config, the shared control plane.
type env struct {
	ec2   *ec2.Client
	cfg   aws.Config
	store *state.Store
	kube  kubernetes.Interface
	// fnKube is the runner's own client, as the function has one: the test's set-up does not spend its
	// request rate limit.
	fnKube kubernetes.Interface
	clock  *clock
	image  string
	// prices are the static on-demand table of the moto region, as the function has before any refresh.
	prices *pricing.Provider
	// sqs and terminationQueue are the termination queue the runner hands nodes to.
	sqs              *sqs.Client
	terminationQueue string
	// mirrors, when set, is the NodeClaim mirror writer the runners get (see mirror_test.go).
	mirrors lifecycle.MirrorWriter
}

func newEnv(t testing.TB) *env {
	t.Helper()
	ctx := context.Background()
	moto := awstest.Shared(t)
	e := &env{cfg: moto.Config(), clock: &clock{}}
	e.ec2 = ec2.NewFromConfig(e.cfg)
	var err error
	e.prices, err = pricing.NewProvider(e.cfg.Region)
	require.NoError(t, err)
	db := state.NewClient(e.cfg)
	_, err = db.CreateTable(ctx, state.CreateTableInput("state"))
	require.NoError(t, err)
	e.store = state.New(db, "state", state.WithClock(e.clock.Now))
	e.sqs = sqs.NewFromConfig(e.cfg)
	q, err := e.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("termination")})
	require.NoError(t, err)
	e.terminationQueue = aws.ToString(q.QueueUrl)
	objs, err := apis.Decode("config.yaml", []byte(config))
	require.NoError(t, err)
	require.Empty(t, apis.DefaultAndValidate(objs))
	items, err := state.ConfigItemsFrom(objs)
	require.NoError(t, err)
	_, err = e.store.ApplyConfig(ctx, items, false)
	require.NoError(t, err)
	images, err := e.ec2.DescribeImages(ctx, &ec2.DescribeImagesInput{Owners: []string{"amazon"},
		Filters: []ec2types.Filter{{Name: aws.String("architecture"), Values: []string{"x86_64"}}}})
	require.NoError(t, err)
	require.NotEmpty(t, images.Images, "moto ships x86_64 images")
	e.image = aws.ToString(images.Images[0].ImageId)

	cp := kubetest.Shared(t, kubetest.Options{})
	e.kube, err = kube.NewClientset(cp.Config)
	require.NoError(t, err)
	// The runner acts as the lifecycle function's own identity, with only its ClusterRole's rights.
	user := "arn:aws:sts::" + awstest.AccountID + ":assumed-role/nodewright-lifecycle/test"
	require.NoError(t, footprint.Grant(context.Background(), e.kube, footprint.Lifecycle, user))
	e.fnKube, err = kube.NewClientset(cp.As(user, footprint.Lifecycle.Group()))
	require.NoError(t, err)
	return e
}

// runner wires the runner as functions/lifecycle does, over instances (the real launcher by default),
// with AWS clients of its own: with $NODEWRIGHT_AWS_CALLS set their calls are recorded for infra's IAM
// proof (the test's own set-up and checks are not).
func (e *env) runner(instances lifecycle.Instances) *lifecycle.Runner {
	return e.runnerWith(lifecycle.RunnerConfig{}, instances)
}

// runnerWith is runner with the runner's settings rc.
func (e *env) runnerWith(rc lifecycle.RunnerConfig, instances lifecycle.Instances) *lifecycle.Runner {
	cfg := awscalls.Instrument(e.cfg, awscalls.Deployment{Cluster: cluster, Account: awstest.AccountID, Table: "state", Manifests: config,
		Queues: map[string]string{"Termination": "termination"}}, "lifecycle")
	launcher := instance.New(ec2.NewFromConfig(cfg), cluster)
	if instances == nil {
		instances = launcher
	}
	client := e.fnKube
	store := state.New(state.NewClient(cfg), "state", state.WithClock(e.clock.Now))
	return lifecycle.NewRunner(rc, lifecycle.RunnerDeps{
		Store:        store,
		Nodes:        client.CoreV1().Nodes(),
		NodeActions:  kube.NewActions(client),
		Instances:    instances,
		Events:       kube.NewRecorder(client, kube.RecorderOptions{Now: e.clock.Now}),
		Prices:       e.prices,
		Terminations: termination.NewSender(sqs.NewFromConfig(cfg), e.terminationQueue),
		Namer:        launcher,
		Memory:       store,
		Health:       instance.NewStatusChecks(ec2.NewFromConfig(cfg)),
		Mirrors:      e.mirrors,
		Now:          e.clock.Now,
	})
}

// terminationRequests receives (and deletes) every request on the termination queue so far.
func (e *env) terminationRequests(t testing.TB) []termination.Request {
	t.Helper()
	var out []termination.Request
	for {
		got, err := e.sqs.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(e.terminationQueue),
			MaxNumberOfMessages: 10})
		require.NoError(t, err)
		if len(got.Messages) == 0 {
			return out
		}
		for _, m := range got.Messages {
			req, err := termination.ParseRequest(aws.ToString(m.Body))
			require.NoError(t, err)
			out = append(out, req)
			_, err = e.sqs.DeleteMessage(context.Background(), &sqs.DeleteMessageInput{QueueUrl: aws.String(e.terminationQueue),
				ReceiptHandle: m.ReceiptHandle})
			require.NoError(t, err)
		}
	}
}

// brokenInstances is the real launcher pointed at a port nobody listens on: every EC2 call fails.
func (e *env) brokenInstances(t testing.TB) *instance.Launcher {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	client := ec2.NewFromConfig(e.cfg, func(o *ec2.Options) {
		o.BaseEndpoint = aws.String("http://" + addr)
		o.RetryMaxAttempts = 1
	})
	return instance.New(client, cluster)
}

// launch runs an instance tagged as Nodewright tags a claim's instance (instance.Request's tags).
func (e *env) launch(t testing.TB, claim, pool string) instance.Instance {
	t.Helper()
	return e.runTagged(t, map[string]string{
		instance.ClusterTagKey(cluster): "owned", instance.TagCluster: cluster,
		instance.TagNodePool: pool, instance.TagNodeClass: "default", instance.TagNodeClaim: claim,
	})
}

// launchKarpenters runs an instance tagged exactly as Karpenter v1.1+ tags the instances it launches.
func (e *env) launchKarpenters(t testing.TB, claim, pool string) instance.Instance {
	t.Helper()
	return e.runTagged(t, map[string]string{
		instance.ClusterTagKey(cluster): "owned", instance.TagEKSClusterName: cluster,
		instance.KarpenterTagNodePool: pool, instance.KarpenterTagNodeClass: "default", instance.KarpenterTagNodeClaim: claim,
		"Name": pool + "/" + claim,
	})
}

// runTagged runs an m5.large in the test zone with tags.
func (e *env) runTagged(t testing.TB, tags map[string]string) instance.Instance {
	t.Helper()
	var list []ec2types.Tag
	for k, v := range tags {
		list = append(list, ec2types.Tag{Key: aws.String(k), Value: aws.String(v)})
	}
	out, err := e.ec2.RunInstances(context.Background(), &ec2.RunInstancesInput{ImageId: aws.String(e.image),
		InstanceType: ec2types.InstanceTypeM5Large, MinCount: aws.Int32(1), MaxCount: aws.Int32(1),
		Placement:         &ec2types.Placement{AvailabilityZone: aws.String(zone)},
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeInstance, Tags: list}}})
	require.NoError(t, err)
	id := aws.ToString(out.Instances[0].InstanceId)
	return instance.Instance{ID: id, Zone: zone, InstanceType: "m5.large", CapacityType: instance.CapacityTypeOnDemand}
}

// instanceState is what EC2 says of an instance now.
func (e *env) instanceState(t testing.TB, id string) string {
	t.Helper()
	out, err := e.ec2.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	require.NoError(t, err)
	require.Len(t, out.Reservations, 1)
	return string(out.Reservations[0].Instances[0].State.Name)
}

// claimedInstances counts the cluster's live instances tagged with claim.
func (e *env) claimedInstances(t testing.TB, claim string) int {
	t.Helper()
	_, found, err := instance.New(e.ec2, cluster).FindByClaim(context.Background(), claim)
	require.NoError(t, err)
	all, err := instance.New(e.ec2, cluster).List(context.Background())
	require.NoError(t, err)
	n := 0
	for _, i := range all {
		if i.Tags[instance.TagNodeClaim] == claim {
			n++
		}
	}
	require.Equal(t, found, n > 0)
	return n
}

// instanceTags are the tags of a live instance of the cluster, as EC2 has them now.
func (e *env) instanceTags(t testing.TB, id string) map[string]string {
	t.Helper()
	live, err := instance.New(e.ec2, cluster).LiveByID(context.Background(), []string{id})
	require.NoError(t, err)
	require.Len(t, live, 1, "instance %s is live", id)
	return live[0].Tags
}

// pendingClaim writes a claim record as the provisioner does before calling EC2.
func (e *env) pendingClaim(t testing.TB, name, pool string) state.Claim {
	t.Helper()
	c, err := e.store.CreateClaim(context.Background(), state.Claim{Name: name, NodePool: pool, NodeClass: "default",
		InstanceTypes: []string{"m5.large"}, Requests: map[string]string{"cpu": "1", "memory": "1Gi"}})
	require.NoError(t, err)
	return c
}

// launchedClaim writes a claim and records its launch of inst, as the provisioner does.
func (e *env) launchedClaim(t testing.TB, name, pool string, inst instance.Instance) state.Claim {
	t.Helper()
	e.pendingClaim(t, name, pool)
	c, err := e.store.UpdateClaim(context.Background(), name, func(c *state.Claim) error {
		c.Lifecycle, c.InstanceID, c.InstanceType, c.Zone = state.Launched, inst.ID, inst.InstanceType, inst.Zone
		c.CapacityType, c.ProviderID = inst.CapacityType, inst.ProviderID()
		return nil
	})
	require.NoError(t, err)
	return c
}

func (e *env) claim(t testing.TB, name string) state.Claim {
	t.Helper()
	c, err := e.store.GetClaim(context.Background(), name)
	require.NoError(t, err)
	return c
}

// joinNode creates the Node a booting instance's kubelet registers: providerID, the claim's NodePool
// label, the karpenter.sh/unregistered:NoExecute taint (and the pool's startup taints, as the launch
// template's --register-with-taints has them), then Ready like kubetest.ReadyNode. It is deleted when the
// test ends.
func (e *env) joinNode(t testing.TB, name string, inst instance.Instance, pool string, taints ...corev1.Taint) *corev1.Node {
	t.Helper()
	ctx := context.Background()
	taints = append([]corev1.Taint{{Key: lifecycle.UnregisteredTaintKey, Effect: corev1.TaintEffectNoExecute}}, taints...)
	_, err := e.kube.CoreV1().Nodes().Create(ctx, &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name, "karpenter.sh/nodepool": pool}},
		Spec:       corev1.NodeSpec{ProviderID: inst.ProviderID(), Taints: taints},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = kube.NewActions(e.kube).RemoveFinalizer(context.Background(), name, kube.TerminationFinalizer)
		_ = e.kube.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	capacity := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("8Gi"),
		corev1.ResourcePods: resource.MustParse("29")}
	now := metav1.Now()
	require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := e.kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		n.Status = corev1.NodeStatus{Capacity: capacity, Allocatable: capacity, Conditions: []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: now, LastTransitionTime: now}}}
		_, err = e.kube.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
		return err
	}))
	require.NoError(t, kube.NewActions(e.kube).Untaint(ctx, name, corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}))
	return e.node(t, name)
}

func (e *env) node(t testing.TB, name string) *corev1.Node {
	t.Helper()
	n, err := e.kube.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	require.NoError(t, err)
	return n
}

// withStatus returns the Node as stored now, with status st.
func (e *env) withStatus(t testing.TB, name string, st corev1.NodeStatus) *corev1.Node {
	t.Helper()
	n := e.node(t, name)
	n.Status = st
	return n
}

// decisions returns the kinds of subject's decisions, newest first.
func (e *env) decisions(t testing.TB, subject string) []string {
	t.Helper()
	ds, err := e.store.Decisions(context.Background(), subject, 20)
	require.NoError(t, err)
	var kinds []string
	for _, d := range ds {
		kinds = append(kinds, d.Kind+"/"+d.Reason)
	}
	return kinds
}
