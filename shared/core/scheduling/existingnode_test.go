package scheduling

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestCompatibleStrict(t *testing.T) {
	node := RequirementsFromLabels(map[string]string{LabelZone: "us-west-2a", "team": "blue"})
	assert.NoError(t, compatibleStrict(node, NewRequirements(MustRequirement(LabelZone, OpIn, "us-west-2a"))))
	assert.Error(t, compatibleStrict(node, NewRequirements(MustRequirement(LabelArch, OpIn, "amd64"))), "a concrete node without the label cannot satisfy In, even for a well-known key")
	assert.NoError(t, compatibleStrict(node, NewRequirements(MustRequirement(LabelArch, OpNotIn, "arm64"))))
	assert.Error(t, compatibleStrict(node, NewRequirements(MustRequirement("team", OpDoesNotExist))))
}

func TestOrderSlots(t *testing.T) {
	slots := []*nodeSlot{{name: "c"}, {name: "b", initialized: true}, {name: "a"}, {name: "d", initialized: true}}
	orderSlots(slots)
	var names []string
	for _, s := range slots {
		names = append(names, s.name)
	}
	assert.Equal(t, []string{"b", "d", "a", "c"}, names)
}

func TestNewNodeSlotAvailable(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourcePods: resource.MustParse("10"),
	}}}
	running := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
		Ports: []corev1.ContainerPort{{HostPort: 80}}}}}}
	done := running.DeepCopy()
	done.Status.Phase = corev1.PodSucceeded
	s := newNodeSlot(ExistingNode{Node: node, Pods: []*corev1.Pod{running, done}, Initialized: true}, nil, nil, nil)
	assert.Equal(t, Resources{CPU: 3000, Pods: 9}, s.available, "finished pods free their room")
	assert.Len(t, s.hostPorts, 1)
	assert.True(t, s.reqs.Get(LabelHostname).Has("n1"), "the node name stands in for a missing hostname label")

	// An uninitialized node without status takes its allocatable from the claim.
	empty := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n2"}}
	s = newNodeSlot(ExistingNode{Node: empty, Allocatable: Resources{CPU: 2000, Pods: 20}}, nil, nil, nil)
	assert.Equal(t, Resources{CPU: 2000, Pods: 20}, s.available)
}
