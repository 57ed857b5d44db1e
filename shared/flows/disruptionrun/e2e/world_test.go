package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/launchtemplate"
	"github.com/nodewright/nodewright/shared/adapters/nodeclass"
	"github.com/nodewright/nodewright/shared/adapters/pricing"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/flows/disruptionrun"
	"github.com/nodewright/nodewright/shared/flows/provisioning"
	"github.com/nodewright/nodewright/shared/flows/termination"
	"github.com/nodewright/nodewright/shared/testsupport/awstest"
	"github.com/nodewright/nodewright/shared/testsupport/kubetest"
)

const (
	cluster = "demo"
	region  = "us-east-1"
	zone    = "us-east-1a"
)

// config is the NodePool (budget %s) and EC2NodeClass: amd64 c/m/r types, spot and on-demand.
const config = `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 0s
    budgets: [{nodes: "%s"}]
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: kubernetes.io/arch, operator: In, values: ["amd64"]}
        - {key: karpenter.k8s.aws/instance-category, operator: In, values: ["c", "m", "r"]}
        - {key: karpenter.sh/capacity-type, operator: In, values: ["spot", "on-demand"]}
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: default
spec:
  amiFamily: AL2023
  role: KarpenterNodeRole-demo
  amiSelectorTerms: [{tags: {team: platform}}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
`

var testCA = base64.StdEncoding.EncodeToString([]byte("-----BEGIN CERTIFICATE-----\ntest\n-----END CERTIFICATE-----\n"))

// world is moto (network, image, role, state table, termination queue) and the local API server, with
// the test's Nodes labelled e2e=<namespace> so runs see only them.
type world struct {
	t        testing.TB
	ctx      context.Context
	ec2      *ec2.Client
	sqs      *sqs.Client
	store    *state.Store
	queueURL string
	client   kubernetes.Interface
	ns       string
	prov     *provisioning.Provisioner
	// classes resolves EC2NodeClasses as the provisioner does (its own resolver).
	classes *nodeclass.Resolver
	// golden is the AMI the world published first (the EC2NodeClass's choice until a newer one).
	golden string
	// maxCommands is the runners' cap on commands per run (1 unless a test raises it).
	maxCommands int
	// claimMirrors, when set, follows the NodeClaim mirrors of the claims a run changes.
	claimMirrors disruptionrun.ClaimMirrors
}

func newWorld(t testing.TB, budget string) *world {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	cfg := awstest.Shared(t).Config()
	cp := kubetest.Shared(t, kubetest.Options{})
	client, err := kube.NewClientset(cp.Config)
	require.NoError(t, err)
	w := &world{t: t, ctx: ctx, ec2: ec2.NewFromConfig(cfg), sqs: sqs.NewFromConfig(cfg), client: client, ns: cp.Namespace(t)}

	tags := func(rt ec2types.ResourceType, k, v string) []ec2types.TagSpecification {
		return []ec2types.TagSpecification{{ResourceType: rt, Tags: []ec2types.Tag{{Key: aws.String(k), Value: aws.String(v)}}}}
	}
	vpc, err := w.ec2.CreateVpc(ctx, &ec2.CreateVpcInput{CidrBlock: aws.String("10.0.0.0/16")})
	require.NoError(t, err)
	for i, z := range []string{"us-east-1a", "us-east-1b"} {
		_, err := w.ec2.CreateSubnet(ctx, &ec2.CreateSubnetInput{VpcId: vpc.Vpc.VpcId, CidrBlock: aws.String(fmt.Sprintf("10.0.%d.0/24", i)),
			AvailabilityZone: aws.String(z), TagSpecifications: tags(ec2types.ResourceTypeSubnet, "karpenter.sh/discovery", cluster)})
		require.NoError(t, err)
	}
	_, err = w.ec2.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{GroupName: aws.String("nodes-" + w.ns), Description: aws.String("nodes"),
		VpcId: vpc.Vpc.VpcId, TagSpecifications: tags(ec2types.ResourceTypeSecurityGroup, "karpenter.sh/discovery", cluster)})
	require.NoError(t, err)
	w.golden, w.maxCommands = w.publishImage("golden-"+w.ns), 1
	iamc := iam.NewFromConfig(cfg)
	_, _ = iamc.CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String("KarpenterNodeRole-demo"),
		AssumeRolePolicyDocument: aws.String(`{"Version":"2012-10-17","Statement":[]}`)}) // shared moto: may exist

	db := state.NewClient(cfg)
	table := "state-" + w.ns
	_, err = db.CreateTable(ctx, state.CreateTableInput(table))
	require.NoError(t, err)
	w.store = state.New(db, table)
	objs, err := apis.Decode("config.yaml", []byte(fmt.Sprintf(config, budget)))
	require.NoError(t, err)
	require.Empty(t, apis.DefaultAndValidate(objs))
	items, err := state.ConfigItemsFrom(objs)
	require.NoError(t, err)
	_, err = w.store.ApplyConfig(ctx, items, false)
	require.NoError(t, err)
	q, err := w.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("termination-" + w.ns)})
	require.NoError(t, err)
	w.queueURL = aws.ToString(q.QueueUrl)

	prices, err := pricing.NewProvider(region)
	require.NoError(t, err)
	w.classes = nodeclass.New(w.ec2, ssm.NewFromConfig(cfg), iamc, cluster, region, time.Now)
	w.prov = provisioning.New(provisioning.Config{
		Cluster: launchtemplate.Cluster{Name: cluster, Endpoint: "https://demo.example.com", CABundle: testCA,
			ServiceCIDR: "10.100.0.0/16", DNSIP: "10.100.0.10"},
		KubernetesVersion: "1.34",
	}, provisioning.Dependencies{
		Store: w.store, Cluster: kube.NewSnapshotter(client, kube.SnapshotOptions{Namespace: w.ns}),
		NodeClasses: w.classes,
		Catalog:     w.ec2, Prices: prices, Templates: launchtemplate.New(w.ec2, cluster, time.Now),
		Launcher: instance.New(w.ec2, cluster), Now: time.Now, Rand: rand.New(rand.NewPCG(7, 11)),
	})
	return w
}

// runner wires a consolidation runner as functions/disruption does, over the Nodes that match selector
// (always narrowed to this test's) and the test namespace's pods, with a short validation delay.
func (w *world) runner(selector string, store disruptionrun.Store) *disruptionrun.Runner {
	client := w.client
	sel := "e2e=" + w.ns
	if selector != "" {
		sel += "," + selector
	}
	if store == nil {
		store = w.store
	}
	return disruptionrun.New(disruptionrun.Config{ValidationDelay: 200 * time.Millisecond, MaxCommands: w.maxCommands},
		disruptionrun.Deps{
			Store:        store,
			Cluster:      kube.NewSnapshotter(client, kube.SnapshotOptions{Namespace: w.ns, NodeSelector: sel}),
			Launcher:     disruptionrun.ProvisionerLauncher{P: w.prov},
			Nodes:        kube.NewActions(client),
			Terminations: termination.NewSender(w.sqs, w.queueURL),
			Events:       kube.NewRecorder(client, kube.RecorderOptions{Instance: "disruption-e2e"}),
			ClaimMirrors: w.claimMirrors,
			Now:          time.Now,
		})
}

// price is the catalog's hourly price of an offering, as a launch would record it.
func (w *world) price(itype, capacityType string) float64 {
	l, err := w.prov.PrepareLaunches(w.ctx)
	require.NoError(w.t, err)
	require.Empty(w.t, l.Problems)
	for _, p := range l.Pools {
		for _, it := range p.InstanceTypes {
			if it.Name != itype {
				continue
			}
			for _, o := range it.Offerings {
				if o.Zone == zone && o.CapacityType == capacityType {
					return o.Price
				}
			}
		}
	}
	w.t.Fatalf("no %s %s offering in %s", capacityType, itype, zone)
	return 0
}

// node creates an initialized, Ready Nodewright Node of an on-demand itype (cpu CPUs) with its claim
// record, stamped as its launch would have (see stamp: otherwise the run judges it drifted or cannot
// judge it), labelled with extra labels too, and pods of the given CPU requests bound to it.
func (w *world) node(name, itype, cpu string, extra map[string]string, pods ...string) string {
	w.t.Helper()
	name = name + "-" + w.ns[len(w.ns)-5:]
	kubetest.ReadyNode(w.t, w.client, name, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu),
		corev1.ResourceMemory: resource.MustParse("7Gi"), corev1.ResourcePods: resource.MustParse("29")})
	providerID := "aws:///" + zone + "/i-" + name
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := w.client.CoreV1().Nodes().Get(w.ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		labels := map[string]string{"e2e": w.ns, scheduling.LabelNodePool: "default", scheduling.LabelNodeInitalized: "true",
			scheduling.LabelInstanceType: itype, scheduling.LabelZone: zone, scheduling.LabelCapacityType: instance.CapacityTypeOnDemand,
			scheduling.LabelArch: "amd64", scheduling.LabelOS: "linux", apis.NodeClassLabelKey: "default"}
		for k, v := range extra {
			labels[k] = v
		}
		for k, v := range labels {
			n.Labels[k] = v
		}
		n.Spec.ProviderID = providerID
		_, err = w.client.CoreV1().Nodes().Update(w.ctx, n, metav1.UpdateOptions{})
		return err
	})
	require.NoError(w.t, err)
	launched := time.Now().Add(-time.Hour)
	init := launched.Add(time.Minute)
	_, err = w.store.CreateClaim(w.ctx, state.Claim{Name: "claim-" + name, NodePool: "default", NodeClass: "default",
		Lifecycle: state.Initialized, InstanceType: itype, Zone: zone, CapacityType: instance.CapacityTypeOnDemand,
		PricePerHour: w.price(itype, instance.CapacityTypeOnDemand), ProviderID: providerID, NodeName: name,
		CreatedAt: launched, LaunchedAt: &launched, InitializedAt: &init})
	require.NoError(w.t, err)
	w.stamp(name)
	for i, c := range pods {
		w.pod(fmt.Sprintf("%s-p%d", name, i), name, c, nil)
	}
	return name
}

// pod creates a running pod requesting cpu bound to node.
func (w *world) pod(name, node, cpu string, annotations map[string]string) {
	w.t.Helper()
	p, err := w.client.CoreV1().Pods(w.ns).Create(w.ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu),
				corev1.ResourceMemory: resource.MustParse("256Mi")}}}}}}, metav1.CreateOptions{})
	require.NoError(w.t, err)
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	_, err = w.client.CoreV1().Pods(w.ns).UpdateStatus(w.ctx, p, metav1.UpdateOptions{})
	require.NoError(w.t, err)
}

// tainted reports whether node carries karpenter.sh/disrupted:NoSchedule in the API server.
func (w *world) tainted(node string) bool {
	n, err := w.client.CoreV1().Nodes().Get(w.ctx, node, metav1.GetOptions{})
	require.NoError(w.t, err)
	for _, t := range n.Spec.Taints {
		if t.MatchTaint(&apis.DisruptedNoScheduleTaint) {
			return true
		}
	}
	return false
}

// terminationRequests receives (and deletes) the termination queue's requests: claim → reason.
func (w *world) terminationRequests() map[string]string {
	out := map[string]string{}
	for {
		got, err := w.sqs.ReceiveMessage(w.ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(w.queueURL), MaxNumberOfMessages: 10})
		require.NoError(w.t, err)
		if len(got.Messages) == 0 {
			return out
		}
		for _, m := range got.Messages {
			var r termination.Request
			require.NoError(w.t, json.Unmarshal([]byte(aws.ToString(m.Body)), &r))
			out[r.Claim] = r.Reason
			_, err := w.sqs.DeleteMessage(w.ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(w.queueURL), ReceiptHandle: m.ReceiptHandle})
			require.NoError(w.t, err)
		}
	}
}

// claimedInstances lists the live instances tagged with a claim, by claim name.
func (w *world) claimedInstances() map[string]bool {
	out, err := w.ec2.DescribeInstances(w.ctx, &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag-key"), Values: []string{instance.TagNodeClaim}},
		{Name: aws.String("instance-state-name"), Values: []string{"pending", "running"}}}})
	require.NoError(w.t, err)
	found := map[string]bool{}
	for _, r := range out.Reservations {
		for _, inst := range r.Instances {
			for _, tag := range inst.Tags {
				if aws.ToString(tag.Key) == instance.TagNodeClaim {
					found[aws.ToString(tag.Value)] = true
				}
			}
		}
	}
	return found
}

// publishImage registers an x86_64 image tagged team=platform (the EC2NodeClass's AMI selector) in
// moto, made from one of its Amazon images, and returns its id. moto dates images to the second and
// the resolver prefers the newest, so a caller publishing a successor waits a second first.
func (w *world) publishImage(name string) string {
	w.t.Helper()
	images, err := w.ec2.DescribeImages(w.ctx, &ec2.DescribeImagesInput{Owners: []string{"amazon"},
		Filters: []ec2types.Filter{{Name: aws.String("architecture"), Values: []string{"x86_64"}}}})
	require.NoError(w.t, err)
	require.NotEmpty(w.t, images.Images)
	base, err := w.ec2.RunInstances(w.ctx, &ec2.RunInstancesInput{ImageId: images.Images[0].ImageId, MinCount: aws.Int32(1), MaxCount: aws.Int32(1)})
	require.NoError(w.t, err)
	img, err := w.ec2.CreateImage(w.ctx, &ec2.CreateImageInput{InstanceId: base.Instances[0].InstanceId, Name: aws.String(name),
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeImage,
			Tags: []ec2types.Tag{{Key: aws.String("team"), Value: aws.String("platform")}}}}})
	require.NoError(w.t, err)
	_, err = w.ec2.TerminateInstances(w.ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{aws.ToString(base.Instances[0].InstanceId)}})
	require.NoError(w.t, err)
	return aws.ToString(img.ImageId)
}

// stored reads the stored NodePool and EC2NodeClass "default" with the drift hashes `nodewright apply`
// stored with them.
func (w *world) stored() (np *apis.NodePool, npHash string, nc *apis.EC2NodeClass, ncHash string) {
	w.t.Helper()
	pool, err := w.store.GetConfig(w.ctx, state.KindNodePool, "default")
	require.NoError(w.t, err)
	class, err := w.store.GetConfig(w.ctx, state.KindEC2NodeClass, "default")
	require.NoError(w.t, err)
	np, nc = &apis.NodePool{}, &apis.EC2NodeClass{}
	require.NoError(w.t, json.Unmarshal([]byte(pool.Spec), np))
	require.NoError(w.t, json.Unmarshal([]byte(class.Spec), nc))
	return np, pool.DriftHash, nc, class.DriftHash
}

// apply stores the configuration changed by edit, as `nodewright apply` does (defaulted, validated,
// with fresh drift hashes).
func (w *world) apply(edit func(np *apis.NodePool, nc *apis.EC2NodeClass)) {
	w.t.Helper()
	np, _, nc, _ := w.stored()
	edit(np, nc)
	objs := apis.Objects{NodePools: []*apis.NodePool{np}, EC2NodeClasses: []*apis.EC2NodeClass{nc}}
	require.Empty(w.t, apis.DefaultAndValidate(objs))
	items, err := state.ConfigItemsFrom(objs)
	require.NoError(w.t, err)
	res, err := w.store.ApplyConfig(w.ctx, items, false)
	require.NoError(w.t, err)
	require.NotEmpty(w.t, res.Updated, "the edit changed the stored configuration")
}

// stamp records on node's claim what its launch would have: the stored drift hashes with this code's
// hash versions, the NodePool's expireAfter, the AMI the EC2NodeClass resolves to now (newest first, as
// the launch path picks it for an amd64 type), a subnet of the node's zone, every selected security
// group, and the labels of the launched instance type (catalog labels, NodePool template labels, then
// what the launch settled). It returns the claim as stored.
func (w *world) stamp(node string) state.Claim {
	w.t.Helper()
	np, npHash, nc, ncHash := w.stored()
	res, err := w.classes.Resolve(w.ctx, nc, "1.34")
	require.NoError(w.t, err)
	require.NotEmpty(w.t, res.Status.AMIs)
	subnet := ""
	for _, s := range res.Status.Subnets {
		if s.Zone == zone && subnet == "" {
			subnet = s.ID
		}
	}
	require.NotEmpty(w.t, subnet)
	var sgs []string
	for _, sg := range res.Status.SecurityGroups {
		sgs = append(sgs, sg.ID)
	}
	slices.Sort(sgs)
	require.NotEmpty(w.t, sgs)
	defaulted := np.DeepCopy()
	defaulted.SetDefaults()
	expireAfter := state.ExpireNever
	if d := defaulted.Spec.Template.Spec.ExpireAfter.Duration(); d != nil {
		expireAfter = d.String()
	}
	l, err := w.prov.PrepareLaunches(w.ctx)
	require.NoError(w.t, err)
	c, err := w.store.UpdateClaim(w.ctx, "claim-"+node, func(c *state.Claim) error {
		labels := map[string]string{}
		for _, p := range l.Pools {
			for _, it := range p.InstanceTypes {
				if it.Name == c.InstanceType {
					maps.Copy(labels, it.Requirements.Labels())
				}
			}
		}
		if len(labels) == 0 {
			return fmt.Errorf("instance type %s is not in the catalog", c.InstanceType)
		}
		maps.Copy(labels, np.Spec.Template.ObjectMeta.Labels)
		maps.Copy(labels, map[string]string{scheduling.LabelNodePool: c.NodePool, apis.NodeClassLabelKey: c.NodeClass,
			scheduling.LabelInstanceType: c.InstanceType, scheduling.LabelZone: c.Zone, scheduling.LabelCapacityType: c.CapacityType})
		c.Labels = labels
		c.TemplateHash, c.TemplateHashVersion = npHash, apis.NodePoolHashVersion
		c.NodeClassHash, c.NodeClassHashVersion = ncHash, apis.EC2NodeClassHashVersion
		c.ImageID, c.SubnetID, c.SecurityGroupIDs = res.Status.AMIs[0].ID, subnet, sgs
		c.ExpireAfter = expireAfter
		return nil
	})
	require.NoError(w.t, err)
	return c
}

// initialize marks claim as joined and initialized under node, as the lifecycle function does.
func (w *world) initialize(claim, node string) {
	w.t.Helper()
	_, err := w.store.UpdateClaim(w.ctx, claim, func(cl *state.Claim) error {
		cl.Lifecycle, cl.NodeName = state.Registered, node
		return nil
	})
	require.NoError(w.t, err)
	_, err = w.store.UpdateClaim(w.ctx, claim, func(cl *state.Claim) error { cl.Lifecycle = state.Initialized; return nil })
	require.NoError(w.t, err)
}

// claim reads a claim record.
func (w *world) claim(name string) state.Claim {
	w.t.Helper()
	c, err := w.store.GetClaim(w.ctx, name)
	require.NoError(w.t, err)
	return c
}

// join registers a Ready Node for a launched claim, labelled as the lifecycle function labels it (the
// claim's labels, initialized, this test's e2e label) with its provider id, and marks the claim
// initialized under it. It returns the Node's name.
func (w *world) join(claim string) string {
	w.t.Helper()
	c := w.claim(claim)
	require.NotEmpty(w.t, c.ProviderID)
	name := "node-" + c.Name
	kubetest.ReadyNode(w.t, w.client, name, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"),
		corev1.ResourceMemory: resource.MustParse("3Gi"), corev1.ResourcePods: resource.MustParse("29")})
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := w.client.CoreV1().Nodes().Get(w.ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		maps.Copy(n.Labels, c.Labels)
		maps.Copy(n.Labels, map[string]string{"e2e": w.ns, scheduling.LabelNodeInitalized: "true", scheduling.LabelOS: "linux"})
		n.Spec.ProviderID = c.ProviderID
		_, err = w.client.CoreV1().Nodes().Update(w.ctx, n, metav1.UpdateOptions{})
		return err
	})
	require.NoError(w.t, err)
	w.initialize(claim, name)
	return name
}
