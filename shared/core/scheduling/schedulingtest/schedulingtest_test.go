package schedulingtest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/core/scheduling"
)

func TestPodBuilder(t *testing.T) {
	p := Pod(PodOptions{Name: "web-1", Owner: "web", CPU: "250m", Memory: "64Mi", HostPorts: []int32{80},
		NodeRequirements: []corev1.NodeSelectorRequirement{In(scheduling.LabelZone, "us-west-2a")}})
	assert.Equal(t, "default", p.Namespace)
	assert.True(t, scheduling.IsProvisionable(p))
	assert.Equal(t, scheduling.Resources{CPU: 250, Memory: 64 << 20, Pods: 1}, scheduling.PodRequests(p))
	require.Len(t, p.OwnerReferences, 1)
	assert.Equal(t, "ReplicaSet", p.OwnerReferences[0].Kind)
	assert.Len(t, scheduling.PodHostPorts(p), 1)
	assert.False(t, scheduling.IsProvisionable(Pod(PodOptions{NodeName: "n1"})))
}

func TestPodsAreNamedInOrder(t *testing.T) {
	pods := Pods(3, PodOptions{Name: "w"})
	assert.Equal(t, []string{"w-0", "w-1", "w-2"}, []string{pods[0].Name, pods[1].Name, pods[2].Name})
}

func TestCatalogs(t *testing.T) {
	types := InstanceTypes(400)
	require.Len(t, types, 400)
	o, ok := types[9].CheapestOffering(scheduling.Requirements{}, nil)
	require.True(t, ok)
	assert.InDelta(t, 0.1*10+0.1*20, o.Price, 1e-9)
	assert.Len(t, types[0].Offerings, 6)

	realistic := RealisticInstanceTypes()
	assert.Len(t, realistic, 120)
	assert.Len(t, SmallCatalog(), 5)
}

func TestRandomPodsAreDeterministic(t *testing.T) {
	a, b := RandomPods(50, 1), RandomPods(50, 1)
	for i := range a {
		assert.Equal(t, scheduling.PodRequests(a[i]), scheduling.PodRequests(b[i]))
		r := scheduling.PodRequests(a[i])
		assert.GreaterOrEqual(t, r.CPU, int64(100))
		assert.LessOrEqual(t, r.CPU, int64(1500))
	}
	assert.NotEqual(t, scheduling.PodRequests(RandomPods(1, 2)[0]), scheduling.PodRequests(RandomPods(1, 3)[0]))
}
