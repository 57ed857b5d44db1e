package e2e

import (
	"context"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/launchtemplate"
	"github.com/nodewright/nodewright/shared/adapters/nodeclass"
	"github.com/nodewright/nodewright/shared/adapters/pricing"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/flows/provisioning"
	"github.com/nodewright/nodewright/shared/testsupport/awscalls"
	"github.com/nodewright/nodewright/shared/testsupport/awstest"
	"github.com/nodewright/nodewright/shared/testsupport/kubetest"
)

// newProvisioner wires the provisioner as functions/provisioner will: real adapters over moto and the
// local control plane, pods read from namespace ns only (other tests' pods are not ours to provision).
func newProvisioner(t *testing.T, w awsWorld, cp *kubetest.ControlPlane, ns string) *provisioning.Provisioner {
	t.Helper()
	return newProvisionerDeps(t, w, cp, ns, nil)
}

// newProvisionerDeps is newProvisioner with the dependencies changed by change (when not nil) before
// the provisioner is built.
func newProvisionerDeps(t testing.TB, w awsWorld, cp *kubetest.ControlPlane, ns string, change func(*provisioning.Dependencies)) *provisioning.Provisioner {
	t.Helper()
	return newProvisionerJoining(t, w, cp, ns, launchtemplate.Cluster{Name: cluster, Endpoint: "https://demo.example.com", CABundle: testCA,
		ServiceCIDR: "10.100.0.0/16", DNSIP: "10.100.0.10"}, change)
}

// newProvisionerJoining is newProvisionerDeps with the nodes told to join the cluster as join says.
func newProvisionerJoining(t testing.TB, w awsWorld, cp *kubetest.ControlPlane, ns string, join launchtemplate.Cluster, change func(*provisioning.Dependencies)) *provisioning.Provisioner {
	t.Helper()
	client, err := kube.NewClientset(cp.Config)
	require.NoError(t, err)
	prices, err := pricing.NewProvider(region)
	require.NoError(t, err)
	// The provisioner's own clients: with $NODEWRIGHT_AWS_CALLS set its calls are recorded for infra's
	// IAM proof (the world's set-up calls are not).
	cfg := awscalls.Instrument(w.cfg, awscalls.Deployment{Cluster: cluster, Account: awstest.AccountID, Table: "state", Manifests: config}, "provisioner")
	ec2c := ec2.NewFromConfig(cfg)
	pcfg := provisioning.Config{Cluster: join, KubernetesVersion: "1.34"}
	deps := provisioning.Dependencies{
		Store:       state.New(state.NewClient(cfg), "state"),
		Cluster:     kube.NewSnapshotter(client, kube.SnapshotOptions{Namespace: ns}),
		NodeClasses: nodeclass.New(ec2c, ssm.NewFromConfig(cfg), iam.NewFromConfig(cfg), cluster, region, time.Now),
		Catalog:     ec2c,
		Prices:      prices,
		Templates:   launchtemplate.New(ec2c, cluster, time.Now),
		Launcher:    instance.New(ec2c, cluster),
		Now:         time.Now,
		Rand:        rand.New(rand.NewPCG(1, 2)),
	}
	if change != nil {
		change(&deps)
	}
	return provisioning.New(pcfg, deps)
}

var claimName = regexp.MustCompile(`^default-[a-z0-9]{5}$`)

func TestProvisionerLaunchesOnceForPendingPods(t *testing.T) {
	w := newAWSWorld(t)
	cp := kubetest.Shared(t, kubetest.Options{Scheduler: true})
	ns := cp.Namespace(t)
	createPendingPods(t, cp.Client, ns, 10)
	p := newProvisioner(t, w, cp, ns)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	rep, err := p.Run(ctx, "run-1")
	require.NoError(t, err)
	t.Logf("first run: %+v", rep)
	assert.True(t, rep.Lease)
	assert.Equal(t, 10, rep.PendingPods)
	assert.Empty(t, rep.Errors)
	assert.Empty(t, rep.Unschedulable)
	assert.Empty(t, rep.Skipped)
	require.NotEmpty(t, rep.Claims)

	instances := w.claimedInstances(t)
	require.Len(t, instances, len(rep.Claims), "one instance per launched claim")
	pods := 0
	for _, c := range rep.Claims {
		pods += c.Pods
		assert.Regexp(t, claimName, c.Name)
		assert.Equal(t, "default", c.NodePool)
		assert.Contains(t, []string{"c", "m", "r"}, c.InstanceType[:1], "c/m/r families only: %s", c.InstanceType)
		assert.Contains(t, []string{"us-east-1a", "us-east-1b"}, c.Zone)
		assert.Contains(t, []string{"spot", "on-demand"}, c.CapacityType)
		assert.Greater(t, c.Price, 0.0)
		inst, ok := instances[c.Name]
		if assert.True(t, ok, "instance tagged with claim %s", c.Name) {
			assert.Equal(t, c.InstanceID, aws.ToString(inst.InstanceId))
			assert.Equal(t, c.InstanceType, string(inst.InstanceType))
			assert.Equal(t, "x86_64", string(inst.Architecture))
		}
	}
	assert.Equal(t, 10, pods, "every pending pod is on a launched claim")

	claims, err := w.store.ListClaims(ctx)
	require.NoError(t, err)
	require.Len(t, claims, len(rep.Claims))
	for _, c := range claims {
		assert.Equal(t, state.Launched, c.Lifecycle, c.Name)
		assert.NotEmpty(t, c.InstanceID, c.Name)
		assert.True(t, strings.HasPrefix(c.ProviderID, "aws:///"+c.Zone+"/"), c.ProviderID)
		assert.NotEmpty(t, c.Requests, c.Name)
		assert.NotEmpty(t, c.TemplateHash, c.Name)
		assert.NotEmpty(t, c.TemplateHashVersion, c.Name)
		assert.NotEmpty(t, c.NodeClassHashVersion, c.Name)
		assert.Equal(t, "720h0m0s", c.ExpireAfter, "the NodePool's default expireAfter is stamped")
		assert.Nil(t, c.TerminationGracePeriod, "the NodePool sets no terminationGracePeriod")
		if inst, ok := instances[c.Name]; ok {
			assert.Equal(t, aws.ToString(inst.ImageId), c.ImageID, "the AMI EC2 launched")
			assert.Equal(t, aws.ToString(inst.SubnetId), c.SubnetID, "the subnet EC2 launched into")
		}
		assert.NotEmpty(t, c.SecurityGroupIDs, "the node class's security groups")
		decisions, err := w.store.Decisions(ctx, "nodeclaim/"+c.Name, 10)
		require.NoError(t, err)
		if assert.Len(t, decisions, 1) {
			assert.Equal(t, "Launch", decisions[0].Kind)
			assert.Equal(t, c.InstanceID, decisions[0].Details["instanceId"])
		}
	}

	t.Run("a second run counts the booting claims and launches nothing", func(t *testing.T) {
		again, err := p.Run(ctx, "run-2")
		require.NoError(t, err)
		assert.True(t, again.Lease)
		assert.Equal(t, 10, again.PendingPods, "the pods still wait for their nodes")
		assert.Equal(t, len(rep.Claims), again.InFlight)
		assert.Empty(t, again.Claims)
		assert.Empty(t, again.Errors)
		assert.Len(t, w.claimedInstances(t), len(rep.Claims))
	})

	t.Run("a run while the lease is held does nothing", func(t *testing.T) {
		held, err := w.store.AcquireLease(ctx, provisioning.LeaseName, "another-run", time.Minute)
		require.NoError(t, err)
		blocked, err := p.Run(ctx, "run-3")
		require.NoError(t, err)
		assert.False(t, blocked.Lease)
		assert.Empty(t, blocked.Claims)
		assert.Zero(t, blocked.PendingPods, "it does not even read the cluster")
		require.NoError(t, w.store.ReleaseLease(ctx, held))
		assert.Len(t, w.claimedInstances(t), len(rep.Claims))
	})
}
