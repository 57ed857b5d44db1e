package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/reconcile"
	"github.com/nodewright/nodewright/shared/flows/lifecycle"
)

var cilium = corev1.Taint{Key: "node.cilium.io/agent-not-ready", Effect: corev1.TaintEffectNoExecute}

func taintKeys(n *corev1.Node) sets.Set[string] {
	keys := sets.New[string]()
	for _, t := range n.Spec.Taints {
		keys.Insert(t.Key + "=" + t.Value + ":" + string(t.Effect))
	}
	return keys
}

func TestLaunchedClaimIsRegisteredThenInitialized(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	inst := e.launch(t, "gpu-reg01", "gpu")
	e.launchedClaim(t, "gpu-reg01", "gpu", inst)
	r := e.runner(nil)

	rep, err := r.Run(ctx, "run-1")
	require.NoError(t, err)
	assert.Equal(t, 0, rep.Registered, "no Node yet")
	assert.Equal(t, "NodeNotFound", rep.Waiting["gpu-reg01"])
	assert.Equal(t, 1, rep.Joining)
	assert.Equal(t, state.Launched, e.claim(t, "gpu-reg01").Lifecycle)

	e.joinNode(t, "ip-10-0-1-17.ec2.internal", inst, "gpu", cilium)
	rep, err = r.Run(ctx, "run-2")
	require.NoError(t, err, rep.Errors)
	assert.Equal(t, 1, rep.Registered, rep.String())
	assert.Empty(t, rep.Errors)
	n := e.node(t, "ip-10-0-1-17.ec2.internal")
	assert.Equal(t, sets.New("dedicated=gpu:NoSchedule", "node.cilium.io/agent-not-ready=:NoExecute"), taintKeys(n),
		"the unregistered taint is lifted, the NodePool's taints are there")
	for k, v := range map[string]string{"karpenter.sh/registered": "true", "team": "ml", "karpenter.sh/nodepool": "gpu",
		"karpenter.k8s.aws/ec2nodeclass": "default", "node.kubernetes.io/instance-type": "m5.large",
		"topology.kubernetes.io/zone": zone, "karpenter.sh/capacity-type": "on-demand"} {
		assert.Equal(t, v, n.Labels[k], k)
	}
	assert.NotContains(t, n.Labels, "karpenter.sh/initialized")
	c := e.claim(t, "gpu-reg01")
	assert.Equal(t, state.Registered, c.Lifecycle)
	assert.Equal(t, "ip-10-0-1-17.ec2.internal", c.NodeName)
	assert.NotNil(t, c.RegisteredAt)
	assert.Contains(t, e.decisions(t, "nodeclaim/gpu-reg01"), "Registered/Registered")
	evs, err := e.kube.CoreV1().Events(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{FieldSelector: fields.Set{
		"involvedObject.kind": "Node", "involvedObject.name": n.Name, "reason": string(lifecycle.ReasonRegistered)}.String()})
	require.NoError(t, err)
	assert.Len(t, evs.Items, 1, "one Registered Event on the Node")

	assert.NotContains(t, e.instanceTags(t, inst.ID), instance.TagName, "the sweep of run-2 read the claim before it registered")

	rep, err = r.Run(ctx, "run-3")
	require.NoError(t, err)
	assert.Equal(t, 0, rep.Initialized)
	assert.Equal(t, "StartupTaintsExist: node.cilium.io/agent-not-ready:NoExecute", rep.Waiting["gpu-reg01"])
	assert.Equal(t, 1, rep.InstancesNamed, rep.String())
	assert.Equal(t, "ip-10-0-1-17.ec2.internal", e.instanceTags(t, inst.ID)[instance.TagName], "the instance is named after its Node")

	require.NoError(t, kube.NewActions(e.kube).Untaint(ctx, n.Name, cilium), "the CNI agent is up")
	rep, err = r.Run(ctx, "run-4")
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Initialized, rep.String())
	assert.Equal(t, 0, rep.Joining)
	assert.Equal(t, "true", e.node(t, n.Name).Labels["karpenter.sh/initialized"])
	c = e.claim(t, "gpu-reg01")
	assert.Equal(t, state.Initialized, c.Lifecycle)
	assert.NotNil(t, c.InitializedAt)
	assert.Equal(t, 1, e.claimedInstances(t, "gpu-reg01"), "registration never touches the instance's claim tag")
}

func TestRunUntilSettledRegistersAndInitializesInOneInvocation(t *testing.T) {
	e := newEnv(t)
	inst := e.launch(t, "default-set01", "default")
	e.launchedClaim(t, "default-set01", "default", inst)
	e.joinNode(t, "ip-10-0-1-18.ec2.internal", inst, "default")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	rep, err := e.runner(nil).RunUntilSettled(ctx, "run-1", 100*time.Millisecond)
	require.NoError(t, err)
	assert.Equal(t, 2, rep.Passes, "one pass registers, the next initializes, then nothing is joining: %s", rep)
	assert.Equal(t, 1, rep.Registered)
	assert.Equal(t, 1, rep.Initialized)
	assert.Equal(t, state.Initialized, e.claim(t, "default-set01").Lifecycle)
	assert.Equal(t, "true", e.node(t, "ip-10-0-1-18.ec2.internal").Labels["karpenter.sh/initialized"])
}

func TestPendingClaimWithInstanceIsAdoptedNotRelaunched(t *testing.T) {
	e := newEnv(t)
	e.pendingClaim(t, "default-adopt", "default")
	inst := e.launch(t, "default-adopt", "default") // CreateFleet answered, then the provisioner crashed

	rep, err := e.runner(nil).Run(context.Background(), "run-1")
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Adopted, rep.String())
	assert.Equal(t, 0, rep.HandedOver)
	c := e.claim(t, "default-adopt")
	assert.Equal(t, state.Launched, c.Lifecycle)
	assert.Equal(t, inst.ID, c.InstanceID)
	assert.Equal(t, inst.ProviderID(), c.ProviderID)
	assert.Equal(t, "m5.large", c.InstanceType)
	want, ok := e.prices.Price("m5.large", inst.Zone, inst.CapacityType)
	require.True(t, ok)
	assert.Positive(t, want)
	assert.Equal(t, want, c.PricePerHour, "priced as the launch would have")
	assert.NotNil(t, c.LaunchedAt)
	assert.Equal(t, 1, e.claimedInstances(t, "default-adopt"), "adopted, not launched again")
	assert.Equal(t, "running", e.instanceState(t, inst.ID))
	assert.Contains(t, e.decisions(t, "nodeclaim/default-adopt"), "AdoptInstance/Adopted")
}

// A redeploy with an empty table: an own instance with a running, registered Node and no claim gets its
// claim rebuilt from its tags and Node; nothing is terminated or handed over, however long it runs.
func TestOwnInstanceWithoutClaimIsAdoptedNotTerminated(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	inst := e.launch(t, "default-redep1", "default") // launched by the stack before it was deleted
	n := e.joinNode(t, "ip-10-0-1-21.ec2.internal", inst, "default")
	acts := kube.NewActions(e.kube)
	require.NoError(t, acts.Untaint(ctx, n.Name, corev1.Taint{Key: lifecycle.UnregisteredTaintKey, Effect: corev1.TaintEffectNoExecute}))
	require.NoError(t, acts.Label(ctx, n.Name, map[string]*string{lifecycle.RegisteredLabel: ptr("true"), lifecycle.InitializedLabel: ptr("true")}))
	r := e.runner(nil)

	rep, err := r.Run(ctx, "run-1")
	require.NoError(t, err)
	assert.Equal(t, 0, rep.Rebuilt, "a fresh instance may still be getting its claim")

	for i, offset := range []time.Duration{time.Minute, 20 * time.Minute, time.Hour} {
		e.clock.set(offset)
		rep, err = r.Run(ctx, "run-"+string(rune('2'+i)))
		require.NoError(t, err)
		assert.Empty(t, rep.Errors)
		assert.Equal(t, 0, rep.HandedOver+rep.ClaimsDeleted, rep.String())
	}
	c := e.claim(t, "default-redep1")
	assert.Equal(t, state.Initialized, c.Lifecycle, "initialized, as its Node says")
	assert.Equal(t, n.Name, c.NodeName)
	assert.Equal(t, inst.ID, c.InstanceID)
	assert.Equal(t, "default", c.NodePool)
	assert.Equal(t, "default", c.NodeClass)
	assert.Equal(t, "m5.large", c.InstanceType)
	assert.Equal(t, zone, c.Zone)
	assert.Equal(t, inst.ProviderID(), c.ProviderID)
	assert.Positive(t, c.PricePerHour)
	assert.Equal(t, e.image, c.ImageID, "the AMI, subnet and security groups are read from the instance, for drift")
	described, err := instance.New(e.ec2, cluster).LiveByID(ctx, []string{inst.ID})
	require.NoError(t, err)
	require.Len(t, described, 1)
	assert.NotEmpty(t, c.SubnetID)
	assert.Equal(t, described[0].SubnetID, c.SubnetID)
	assert.Equal(t, described[0].SecurityGroupIDs, c.SecurityGroupIDs)
	assert.Empty(t, c.TemplateHash, "unknown hashes are re-stamped by drift, not guessed")
	assert.Equal(t, "running", e.instanceState(t, inst.ID))
	assert.Contains(t, e.decisions(t, "nodeclaim/default-redep1"), "RebuildClaim/Rebuilt")
	assert.Empty(t, e.terminationRequests(t), "nothing was handed to termination")
	_, err = e.kube.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
	assert.NoError(t, err, "the Node stays")
}

// Karpenter's instances and Nodes are not Nodewright's: however long they run without a Nodewright claim,
// and whether or not their Node is Ready, the lifecycle never touches them.
func TestKarpentersInstancesAndNodesAreNeverTouched(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	inst := e.launchKarpenters(t, "general-x7k2p", "general")
	name := "ip-10-0-9-9.ec2.internal"
	_, err := e.kube.CoreV1().Nodes().Create(ctx, &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name,
			"karpenter.sh/nodepool": "general", "karpenter.k8s.aws/ec2nodeclass": "default", "karpenter.sh/registered": "true",
			"karpenter.sh/initialized": "true", "karpenter.sh/capacity-type": "on-demand", corev1.LabelInstanceTypeStable: "m5.large"},
			Finalizers: []string{"karpenter.sh/termination"}},
		Spec: corev1.NodeSpec{ProviderID: inst.ProviderID()},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		if n, err := e.kube.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{}); err == nil {
			n.Finalizers = nil
			_, _ = e.kube.CoreV1().Nodes().Update(context.Background(), n, metav1.UpdateOptions{})
		}
		_ = e.kube.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	now := metav1.Now()
	ready := corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
		Reason: "KubeletReady", LastHeartbeatTime: now, LastTransitionTime: now}}}
	_, err = e.kube.CoreV1().Nodes().UpdateStatus(ctx, e.withStatus(t, name, ready), metav1.UpdateOptions{})
	require.NoError(t, err)
	before := e.node(t, name).ResourceVersion
	r := e.runner(nil)

	for i, offset := range []time.Duration{0, time.Minute, 20 * time.Minute, time.Hour} {
		e.clock.set(offset)
		rep, err := r.Run(ctx, "run-"+string(rune('1'+i)))
		require.NoError(t, err)
		assert.Equal(t, 0, rep.Rebuilt+rep.HandedOver+rep.ClaimsDeleted+rep.Registered+rep.Initialized, rep.String())
	}
	assert.Equal(t, "running", e.instanceState(t, inst.ID))
	assert.Equal(t, before, e.node(t, name).ResourceVersion, "the Node is untouched")
	assert.Empty(t, e.terminationRequests(t))
	claims, err := e.store.ListClaims(ctx)
	require.NoError(t, err)
	assert.Empty(t, claims, "no claim is made up for a Karpenter instance")

	// Not even once its Node stops being Ready (old code deleted such a Node as a ghost).
	ready.Conditions[0].Status = corev1.ConditionUnknown
	_, err = e.kube.CoreV1().Nodes().UpdateStatus(ctx, e.withStatus(t, name, ready), metav1.UpdateOptions{})
	require.NoError(t, err)
	before = e.node(t, name).ResourceVersion
	e.clock.set(2 * time.Hour)
	_, err = r.Run(ctx, "run-9")
	require.NoError(t, err)
	assert.Equal(t, before, e.node(t, name).ResourceVersion)
	assert.Nil(t, e.node(t, name).DeletionTimestamp)
	assert.Equal(t, "running", e.instanceState(t, inst.ID))
	assert.Empty(t, e.terminationRequests(t))
}

// listThenLaunch lists the instances, and then — before the pass reads the claims — the provisioner
// records a launch: the scale-up race.
type listThenLaunch struct {
	*instance.Launcher
	after func()
}

func (l listThenLaunch) List(ctx context.Context) ([]instance.Instance, error) {
	out, err := l.Launcher.List(ctx)
	if l.after != nil {
		l.after()
	}
	return out, err
}

func TestScaleUpRaceKeepsTheFreshClaimAndInstance(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	var inst instance.Instance
	raced := listThenLaunch{Launcher: instance.New(e.ec2, cluster), after: func() {
		e.pendingClaim(t, "default-race1", "default")
		inst = e.launch(t, "default-race1", "default")
		_, err := e.store.UpdateClaim(ctx, "default-race1", func(c *state.Claim) error {
			c.Lifecycle, c.InstanceID, c.InstanceType, c.Zone = state.Launched, inst.ID, inst.InstanceType, inst.Zone
			c.CapacityType, c.ProviderID = inst.CapacityType, inst.ProviderID()
			return nil
		})
		require.NoError(t, err)
	}}
	rep, err := e.runner(raced).Run(ctx, "run-1")
	require.NoError(t, err)
	assert.Equal(t, 0, rep.ClaimsDeleted+rep.HandedOver, rep.String())
	assert.Equal(t, state.Launched, e.claim(t, "default-race1").Lifecycle, "launched after the list was read: not garbage")

	// Two minutes on, a list that still lags behind (EC2 is eventually consistent) does not decide it
	// either: EC2 asked by id says the instance runs.
	e.clock.set(3 * time.Minute)
	lagging := listThenLaunch{Launcher: instance.New(e.ec2, cluster)}
	rep, err = e.runner(hiding{lagging, inst.ID}).Run(ctx, "run-2")
	require.NoError(t, err)
	assert.Equal(t, 0, rep.ClaimsDeleted+rep.HandedOver+rep.Rebuilt, rep.String())
	assert.Contains(t, rep.Waiting["nodeclaim/default-race1"], "InstanceStillRunning")
	assert.Equal(t, state.Launched, e.claim(t, "default-race1").Lifecycle)
	assert.Equal(t, "running", e.instanceState(t, inst.ID))

	// Once it really is gone, the claim is forgotten.
	require.NoError(t, instance.New(e.ec2, cluster).Terminate(ctx, inst.ID))
	rep, err = e.runner(nil).Run(ctx, "run-3")
	require.NoError(t, err)
	assert.Equal(t, 1, rep.ClaimsDeleted, rep.String())
	assert.Equal(t, state.Deleted, e.claim(t, "default-race1").Lifecycle)
	assert.Empty(t, e.terminationRequests(t))
}

// hiding leaves one instance out of the list, as a lagging DescribeInstances would.
type hiding struct {
	listThenLaunch
	id string
}

func (h hiding) List(ctx context.Context) ([]instance.Instance, error) {
	all, err := h.listThenLaunch.List(ctx)
	var out []instance.Instance
	for _, i := range all {
		if i.ID != h.id {
			out = append(out, i)
		}
	}
	return out, err
}

func TestGhostNodeIsHandedToTerminationOnceNotReady(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	inst := e.launch(t, "default-ghost", "default")
	e.launchedClaim(t, "default-ghost", "default", inst)
	n := e.joinNode(t, "ip-10-0-1-22.ec2.internal", inst, "default")
	r := e.runner(nil)
	_, err := r.Run(ctx, "run-1")
	require.NoError(t, err)
	require.Equal(t, state.Registered, e.claim(t, "default-ghost").Lifecycle)
	require.NoError(t, instance.New(e.ec2, cluster).Terminate(ctx, inst.ID), "the instance dies behind Nodewright's back")
	e.clock.set(reconcile.ClaimGCGrace + time.Second)

	rep, err := r.Run(ctx, "run-2")
	require.NoError(t, err)
	assert.Equal(t, 0, rep.HandedOver+rep.ClaimsDeleted, "a Ready Node is not removed on an instance list's word: %s", rep)

	n.Status.Conditions[0].Status = corev1.ConditionUnknown // the node lifecycle controller's verdict
	_, err = e.kube.CoreV1().Nodes().UpdateStatus(ctx, e.withStatus(t, n.Name, n.Status), metav1.UpdateOptions{})
	require.NoError(t, err)
	rep, err = r.Run(ctx, "run-3")
	require.NoError(t, err)
	assert.Equal(t, 1, rep.HandedOver, rep.String())
	reqs := e.terminationRequests(t)
	require.Len(t, reqs, 1)
	assert.Equal(t, "default-ghost", reqs[0].Claim)
	assert.Equal(t, "garbage_collected", reqs[0].Reason)
	_, err = e.kube.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
	assert.NoError(t, err, "only the termination flow deletes Nodes")
	assert.Contains(t, e.decisions(t, "nodeclaim/default-ghost"), "TerminationRequested/garbage_collected")
}

func TestClaimWithoutNodeAfterRegistrationTimeoutIsHandedToTermination(t *testing.T) {
	e := newEnv(t)
	inst := e.launch(t, "default-slow1", "default")
	e.clock.set(-16 * time.Minute) // launched 16 minutes ago
	e.launchedClaim(t, "default-slow1", "default", inst)
	e.clock.set(0)

	rep, err := e.runner(nil).Run(context.Background(), "run-1")
	require.NoError(t, err)
	assert.Equal(t, 1, rep.HandedOver, rep.String())
	assert.Equal(t, 0, rep.ClaimsDeleted, "the termination flow deletes it once the instance is gone")
	assert.Equal(t, "running", e.instanceState(t, inst.ID), "the lifecycle terminates nothing itself")
	reqs := e.terminationRequests(t)
	require.Len(t, reqs, 1)
	assert.Equal(t, "default-slow1", reqs[0].Claim)
	assert.Equal(t, "registration_timeout", reqs[0].Reason)
	assert.Equal(t, []string{"TerminationRequested/registration_timeout"}, e.decisions(t, "nodeclaim/default-slow1"))
}

func TestFailingInstanceListDecidesNothingDestructive(t *testing.T) {
	e := newEnv(t)
	leaked := e.launch(t, "default-gone2", "default")
	slow := e.launch(t, "default-slow2", "default")
	e.clock.set(-16 * time.Minute)
	e.launchedClaim(t, "default-slow2", "default", slow)
	e.clock.set(time.Minute) // past the leak grace too
	joined := e.launch(t, "default-join2", "default")
	e.launchedClaim(t, "default-join2", "default", joined)
	e.joinNode(t, "ip-10-0-1-19.ec2.internal", joined, "default")

	rep, err := e.runner(e.brokenInstances(t)).Run(context.Background(), "run-1")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "listing the cluster's instances")
	assert.NotEmpty(t, rep.Skipped)
	assert.Equal(t, 0, rep.HandedOver+rep.ClaimsDeleted+rep.Rebuilt+rep.Adopted, rep.String())
	assert.Equal(t, "running", e.instanceState(t, leaked.ID))
	assert.Equal(t, "running", e.instanceState(t, slow.ID))
	assert.Equal(t, state.Launched, e.claim(t, "default-slow2").Lifecycle)
	assert.Equal(t, 1, rep.Registered, "registration is not destructive and goes ahead")
	assert.Equal(t, state.Registered, e.claim(t, "default-join2").Lifecycle)
}

func TestAnotherHolderMeansNoRun(t *testing.T) {
	e := newEnv(t)
	_, err := e.store.AcquireLease(context.Background(), lifecycle.LeaseName, "other-invocation", time.Minute)
	require.NoError(t, err)
	inst := e.launch(t, "default-held1", "default")
	e.launchedClaim(t, "default-held1", "default", inst)
	e.joinNode(t, "ip-10-0-1-20.ec2.internal", inst, "default")

	rep, err := e.runner(nil).RunUntilSettled(context.Background(), "run-1", time.Second)
	require.NoError(t, err)
	assert.False(t, rep.Lease)
	assert.Equal(t, 0, rep.Passes)
	assert.Equal(t, state.Launched, e.claim(t, "default-held1").Lifecycle)
}

func ptr(s string) *string { return &s }
