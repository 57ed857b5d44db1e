package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/nodewright/nodewright/shared/instance"
	"github.com/nodewright/nodewright/shared/kube"
	"github.com/nodewright/nodewright/shared/lifecycle"
	"github.com/nodewright/nodewright/shared/state"
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

	rep, err = r.Run(ctx, "run-3")
	require.NoError(t, err)
	assert.Equal(t, 0, rep.Initialized)
	assert.Equal(t, "StartupTaintsExist: node.cilium.io/agent-not-ready:NoExecute", rep.Waiting["gpu-reg01"])

	require.NoError(t, kube.NewActions(e.kube).Untaint(ctx, n.Name, cilium), "the CNI agent is up")
	rep, err = r.Run(ctx, "run-4")
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Initialized, rep.String())
	assert.Equal(t, 0, rep.Joining)
	assert.Equal(t, "true", e.node(t, n.Name).Labels["karpenter.sh/initialized"])
	c = e.claim(t, "gpu-reg01")
	assert.Equal(t, state.Initialized, c.Lifecycle)
	assert.NotNil(t, c.InitializedAt)
	assert.Equal(t, 1, e.claimedInstances(t, "gpu-reg01"), "registration never touches the instance")
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
	assert.Equal(t, 0, rep.Terminated)
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

func TestLeakedInstanceIsTerminatedAfterTheGracePeriod(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	inst := e.launch(t, "default-gone1", "default") // no claim stands for it
	e.joinNode(t, "ip-10-0-1-21.ec2.internal", inst, "default")
	r := e.runner(nil)

	rep, err := r.Run(ctx, "run-1")
	require.NoError(t, err)
	assert.Equal(t, 0, rep.Terminated, "a fresh instance may still be getting its claim")
	assert.Equal(t, "running", e.instanceState(t, inst.ID))

	e.clock.set(time.Minute)
	rep, err = r.Run(ctx, "run-2")
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Terminated, rep.String())
	assert.Contains(t, []string{"shutting-down", "terminated"}, e.instanceState(t, inst.ID))
	assert.Contains(t, e.decisions(t, "nodeclaim/default-gone1"), "TerminateInstance/leaked")
	assert.Equal(t, 1, rep.NodesDeleted, "its Node goes with it")
	_, err = e.kube.CoreV1().Nodes().Get(ctx, "ip-10-0-1-21.ec2.internal", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "node deleted: %v", err)
}

func TestGhostNodeIsDeletedOnceNotReady(t *testing.T) {
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

	rep, err := r.Run(ctx, "run-2")
	require.NoError(t, err)
	assert.Equal(t, 0, rep.NodesDeleted+rep.ClaimsDeleted, "a Ready Node is not deleted on an instance list's word: %s", rep)

	n.Status.Conditions[0].Status = corev1.ConditionUnknown // the node lifecycle controller's verdict
	_, err = e.kube.CoreV1().Nodes().UpdateStatus(ctx, e.withStatus(t, n.Name, n.Status), metav1.UpdateOptions{})
	require.NoError(t, err)
	rep, err = r.Run(ctx, "run-3")
	require.NoError(t, err)
	assert.Equal(t, 1, rep.NodesDeleted, rep.String())
	assert.Equal(t, 1, rep.ClaimsDeleted, "the ghost claim goes too")
	rep, err = r.Run(ctx, "run-4")
	require.NoError(t, err)
	assert.Equal(t, 1, rep.FinalizersRemoved, "the deleting Node's instance is gone: the next pass lets it go: %s", rep)
	_, err = e.kube.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "node deleted: %v", err)
	assert.Equal(t, state.Deleted, e.claim(t, "default-ghost").Lifecycle)
	assert.Contains(t, e.decisions(t, "node/"+n.Name), "DeleteNode/ghost node")
}

func TestClaimWithoutNodeAfterRegistrationTimeoutIsTerminatedAndDeleted(t *testing.T) {
	e := newEnv(t)
	inst := e.launch(t, "default-slow1", "default")
	e.clock.set(-16 * time.Minute) // launched 16 minutes ago
	e.launchedClaim(t, "default-slow1", "default", inst)
	e.clock.set(0)

	rep, err := e.runner(nil).Run(context.Background(), "run-1")
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Terminated, rep.String())
	assert.Equal(t, 1, rep.ClaimsDeleted)
	assert.Contains(t, []string{"shutting-down", "terminated"}, e.instanceState(t, inst.ID))
	c := e.claim(t, "default-slow1")
	assert.Equal(t, state.Deleted, c.Lifecycle)
	assert.NotNil(t, c.DeletedAt)
	assert.ElementsMatch(t, []string{"DeleteClaim/registration_timeout", "TerminateInstance/registration_timeout"},
		e.decisions(t, "nodeclaim/default-slow1"))
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
	assert.Equal(t, 0, rep.Terminated+rep.ClaimsDeleted+rep.NodesDeleted+rep.Adopted, rep.String())
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
