package provisioning

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/nodeclass"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
)

const spareClass = `
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: spare}
spec:
  amiFamily: AL2023
  role: KarpenterNodeRole-demo
  amiSelectorTerms: [{tags: {team: platform}}]
  subnetSelectorTerms: [{id: subnet-gone}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
`

// TestMirrorConfigurationShowsEveryClassAndEachPoolsClaims: the mirrors are built from what
// PrepareLaunches resolved (no second resolution of a class it resolved), every stored class (one no
// pool references is resolved then), and each pool's live claims with their Node's capacity, else their
// instance type's.
func TestMirrorConfigurationShowsEveryClassAndEachPoolsClaims(t *testing.T) {
	ctx := context.Background()
	w := newTestProvisioner(t, fakeCluster{snap: pendingSnapshot()})
	_, err := w.store.ApplyConfig(ctx, storedConfig(t, poolAndClass+"---"+spareClass), false)
	require.NoError(t, err)
	resolver := w.p.deps.NodeClasses.(*fakeResolver)
	resolver.res["spare"] = nodeclass.Resolution{Status: apis.EC2NodeClassStatus{Conditions: []metav1.Condition{
		{Type: apis.ConditionTypeSubnetsReady, Status: metav1.ConditionFalse, Reason: "SubnetsNotFound", Message: "subnetSelectorTerms match no subnet"}}}}

	l, err := w.p.PrepareLaunches(ctx)
	require.NoError(t, err)
	calls := resolver.calls
	launched := time.Now()
	claims := []state.Claim{
		{Name: "default-a", NodePool: "default", NodeClass: "default", Lifecycle: state.Initialized, NodeName: "node-a",
			InstanceType: "m5.xlarge", InstanceID: "i-a", LaunchedAt: &launched},
		{Name: "default-b", NodePool: "default", NodeClass: "default", Lifecycle: state.Launched, InstanceType: "m5.xlarge",
			InstanceID: "i-b", LaunchedAt: &launched},
		{Name: "default-c", NodePool: "default", NodeClass: "default", Lifecycle: state.Pending},
		{Name: "default-d", NodePool: "default", NodeClass: "default", Lifecycle: state.Deleted},
	}
	nodes := []corev1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}, Status: corev1.NodeStatus{Capacity: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("3")}}}}
	cfg := l.MirrorConfiguration(ctx, claims, nodes)

	assert.Equal(t, calls+1, resolver.calls, "only the class no pool references is resolved again")
	require.Len(t, cfg.Classes, 2)
	assert.Equal(t, "default", cfg.Classes[0].EC2NodeClass.Name)
	assert.Equal(t, "spare", cfg.Classes[1].EC2NodeClass.Name)
	assert.Equal(t, "SubnetsNotFound", cfg.Classes[1].Status.Conditions[0].Reason)
	assert.Empty(t, cfg.Unresolved)

	require.Len(t, cfg.Pools, 1)
	p := cfg.Pools[0]
	assert.Equal(t, "default", p.NodePool.Name)
	assert.NotEmpty(t, p.TemplateHash)
	assert.NotEmpty(t, p.ClassHash)
	assert.Empty(t, p.Invalid)
	require.Len(t, p.Claims, 3, "the deleted claim is not live")
	cpu := func(i int) string {
		q, ok := p.Claims[i].Capacity[corev1.ResourceCPU]
		if !ok {
			return ""
		}
		return q.String()
	}
	assert.Equal(t, "3", cpu(0), "the Node's capacity")
	assert.Equal(t, "4", cpu(1), "the instance type's, before the Node joins")
	assert.Nil(t, p.Claims[2].Capacity, "not launched yet")

	resolver.err = assert.AnError
	cfg = (&Launches{p: w.p, cfg: l.cfg}).MirrorConfiguration(ctx, nil, nil)
	assert.Equal(t, []string{"default", "spare"}, cfg.Unresolved, "a class whose resolution failed is named, not shown")
	assert.True(t, strings.HasPrefix(cfg.Pools[0].NodePool.Name, "default"))
}
