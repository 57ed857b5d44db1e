package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/core/settings"
	"github.com/nodewright/nodewright/shared/flows/provisioning"
	"github.com/nodewright/nodewright/shared/testsupport/kubetest"
)

// staticPool is a static NodePool of two nodes on the test's EC2NodeClass.
const staticPool = `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: fixed
spec:
  replicas: 2
  limits:
    nodes: 3
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
          values: ["m"]
        - key: karpenter.sh/capacity-type
          operator: In
          values: ["on-demand"]
`

// staticPoolNodes is the number of nodes a static NodePool holds (provisioning.CountStatic over the
// claims): what the headroom sandbox scenario reports as staticPoolNodesAfterDeletion.
func staticPoolNodes(t *testing.T, s *state.Store, pool string) int64 {
	t.Helper()
	claims, err := s.ListClaims(context.Background())
	require.NoError(t, err)
	return provisioning.CountStatic(claims, pool).Active
}

// TestStaticPoolRestoresItsCountAfterANodeIsDeleted: with StaticCapacity on, a provisioning run with no
// pending pod launches the static pool's two nodes into moto; their Nodes join the real API server; one
// Node is deleted (kubectl delete node), its claim handed to the termination flow and its instance
// terminated as the lifecycle and termination flows do; the next run launches one node, and the pool is
// back at two running instances.
func TestStaticPoolRestoresItsCountAfterANodeIsDeleted(t *testing.T) {
	w := newAWSWorld(t)
	w.applyConfig(t, staticPool)
	set := settings.Default()
	set.FeatureGates.StaticCapacity = true
	item, err := state.SettingsItem(set)
	require.NoError(t, err)
	_, err = w.store.PutConfig(context.Background(), item)
	require.NoError(t, err)
	cp := kubetest.Shared(t, kubetest.Options{})
	ns := cp.Namespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	p := newProvisioner(t, w, cp, ns)

	rep, err := p.Run(ctx, "run-static-1")
	require.NoError(t, err)
	require.Len(t, rep.Claims, 2, "%v %v", rep.Static, rep.Errors)
	running := w.claimedInstances(t)
	require.Len(t, running, 2)

	// The two Nodes join; the lifecycle function would register and initialize their claims.
	nodes := map[string]string{}
	for _, lc := range rep.Claims {
		c, err := w.store.GetClaim(ctx, lc.Name)
		require.NoError(t, err)
		name := "static-" + lc.InstanceID
		kubetest.ReadyNode(t, cp.Client, name, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")})
		n, err := cp.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		require.NoError(t, err)
		n.Labels[scheduling.LabelNodePool] = "fixed"
		n.Spec.ProviderID = c.ProviderID
		_, err = cp.Client.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
		require.NoError(t, err)
		for _, l := range []state.Lifecycle{state.Registered, state.Initialized} {
			_, err = w.store.UpdateClaim(ctx, lc.Name, func(c *state.Claim) error { c.Lifecycle, c.NodeName = l, name; return nil })
			require.NoError(t, err)
		}
		nodes[lc.Name] = name
	}
	again, err := p.Run(ctx, "run-static-2")
	require.NoError(t, err)
	assert.Empty(t, again.Claims, "the pool has its two nodes")

	// kubectl delete node: the lifecycle hands the claim over, the termination flow terminates the instance.
	gone := rep.Claims[0]
	require.NoError(t, cp.Client.CoreV1().Nodes().Delete(ctx, nodes[gone.Name], metav1.DeleteOptions{}))
	_, err = w.store.UpdateClaim(ctx, gone.Name, func(c *state.Claim) error {
		now := time.Now()
		c.TerminationSentAt, c.TerminationSends = &now, 1
		return nil
	})
	require.NoError(t, err)
	_, err = w.ec2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{gone.InstanceID}})
	require.NoError(t, err)
	assert.EqualValues(t, 1, staticPoolNodes(t, w.store, "fixed"))

	third, err := p.Run(ctx, "run-static-3")
	require.NoError(t, err)
	require.Len(t, third.Claims, 1, "%v %v", third.Static, third.Errors)
	assert.Equal(t, "fixed", third.Claims[0].NodePool)
	assert.Zero(t, third.Claims[0].Pods)
	assert.EqualValues(t, 2, staticPoolNodes(t, w.store, "fixed"), "the pool holds its count through the deletion")
	running = w.claimedInstances(t)
	assert.Len(t, running, 2, "two instances run: the survivor and the replacement")
	assert.NotContains(t, running, gone.Name)
}
