package kube

import (
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestTrimmingKeepsWhatDecisionsRead: what scheduling, disruption and draining read survives trimming;
// the bulk that none reads does not.
func TestTrimmingKeepsWhatDecisionsRead(t *testing.T) {
	req := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}
	always := corev1.ContainerRestartPolicyAlways
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", Labels: map[string]string{"app": "web"},
			Annotations:     map[string]string{"karpenter.sh/do-not-disrupt": "true", lastApplied: strings.Repeat("x", 4000)},
			OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "web-1"}},
			ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}},
		Spec: corev1.PodSpec{
			NodeName: "n1", PriorityClassName: "high", NodeSelector: map[string]string{"zone": "a"},
			Tolerations: []corev1.Toleration{{Key: "gpu"}}, Affinity: &corev1.Affinity{},
			TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{MaxSkew: 1}},
			InitContainers: []corev1.Container{{Name: "sidecar", RestartPolicy: &always, Resources: corev1.ResourceRequirements{Requests: req},
				Env: []corev1.EnvVar{{Name: "A"}}}},
			Containers: []corev1.Container{{Name: "app", Image: "shop:1", Resources: corev1.ResourceRequirements{Requests: req},
				Ports: []corev1.ContainerPort{{ContainerPort: 80}, {HostPort: 8080}}, Env: []corev1.EnvVar{{Name: "B"}}, Command: []string{"run"},
				LivenessProbe: &corev1.Probe{}, VolumeMounts: []corev1.VolumeMount{{Name: "data"}}}},
			Volumes: []corev1.Volume{
				{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}},
				{Name: "token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{{}}}}},
			},
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.ContainersReady},
				{Type: corev1.PodScheduled, Reason: "Unschedulable", Message: strings.Repeat("0/5000 nodes ", 1000)}},
			PodIP:             "10.0.0.1",
			ContainerStatuses: []corev1.ContainerStatus{{Name: "app"}}},
	}
	TrimPod(p)
	assert.Equal(t, "true", p.Annotations["karpenter.sh/do-not-disrupt"])
	assert.NotContains(t, p.Annotations, lastApplied)
	assert.Nil(t, p.ManagedFields)
	assert.Len(t, p.OwnerReferences, 1)
	assert.Equal(t, "n1", p.Spec.NodeName)
	assert.Equal(t, "high", p.Spec.PriorityClassName)
	assert.NotNil(t, p.Spec.Affinity)
	assert.Len(t, p.Spec.Tolerations, 1)
	assert.Len(t, p.Spec.TopologySpreadConstraints, 1)
	assert.Equal(t, req, p.Spec.Containers[0].Resources.Requests)
	require.Len(t, p.Spec.Containers[0].Ports, 1, "only host ports stay")
	assert.Equal(t, int32(8080), p.Spec.Containers[0].Ports[0].HostPort)
	assert.Empty(t, p.Status.PodIP)
	assert.Equal(t, &always, p.Spec.InitContainers[0].RestartPolicy, "sidecars are told apart")
	assert.Nil(t, p.Spec.Containers[0].Env)
	assert.Nil(t, p.Spec.InitContainers[0].Env)
	assert.Nil(t, p.Spec.Containers[0].Command)
	assert.Nil(t, p.Spec.Containers[0].LivenessProbe)
	assert.Nil(t, p.Spec.Containers[0].VolumeMounts)
	require.Len(t, p.Spec.Volumes, 1, "only volumes that constrain placement stay")
	assert.Equal(t, "data", p.Spec.Volumes[0].PersistentVolumeClaim.ClaimName)
	assert.Equal(t, corev1.PodRunning, p.Status.Phase)
	require.Len(t, p.Status.Conditions, 1, "PodScheduled, Ready and DisruptionTarget stay")
	assert.Equal(t, "Unschedulable", p.Status.Conditions[0].Reason)
	assert.Len(t, p.Status.Conditions[0].Message, maxConditionMessage)
	assert.Nil(t, p.Status.ContainerStatuses)

	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"karpenter.sh/nodepool": "default"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}},
		Spec: corev1.NodeSpec{ProviderID: "aws:///us-east-1a/i-1", Taints: []corev1.Taint{{Key: "karpenter.sh/unregistered"}}},
		Status: corev1.NodeStatus{Allocatable: req, Capacity: req,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			Images:     []corev1.ContainerImage{{Names: []string{"shop:1"}}}, VolumesInUse: []corev1.UniqueVolumeName{"v"},
			NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.34.4"}},
	}
	TrimNode(n)
	assert.Nil(t, n.ManagedFields)
	assert.Nil(t, n.Status.Images)
	assert.Nil(t, n.Status.VolumesInUse)
	assert.Equal(t, "default", n.Labels["karpenter.sh/nodepool"])
	assert.Equal(t, "aws:///us-east-1a/i-1", n.Spec.ProviderID)
	assert.Len(t, n.Spec.Taints, 1)
	assert.Equal(t, req, n.Status.Allocatable)
	assert.Equal(t, corev1.ConditionTrue, n.Status.Conditions[0].Status)
	assert.Equal(t, "v1.34.4", n.Status.NodeInfo.KubeletVersion)
}

// TestLimitsAreReadAsRequestsWhereNoneIsSet: a limit without a request is the request (the API server
// defaults it so), and then the limits go.
func TestLimitsAreReadAsRequestsWhereNoneIsSet(t *testing.T) {
	c := corev1.Container{Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), "nvidia.com/gpu": resource.MustParse("1")}}}
	trimContainer(&c)
	assert.Nil(t, c.Resources.Limits)
	cpu, gpu := c.Resources.Requests[corev1.ResourceCPU], c.Resources.Requests["nvidia.com/gpu"]
	assert.Equal(t, "1", cpu.String(), "a request set stays")
	assert.Equal(t, "1", gpu.String(), "a limit alone becomes the request")
}

// TestPodsOfOneControllerShareTheirMaps: equal labels, annotations, requests and strings of different
// pods end up as one allocation; different ones stay apart.
func TestPodsOfOneControllerShareTheirMaps(t *testing.T) {
	in := newInterner()
	mk := func(name, hash string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop",
			Labels: map[string]string{"app": "web", "pod-template-hash": hash}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "shop:1", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}}}}}}
	}
	a, b, other := mk("a", "1"), mk("b", "1"), mk("c", "2")
	for _, p := range []*corev1.Pod{a, b, other} {
		in.pod(p)
	}
	assert.Equal(t, reflectPointer(a.Labels), reflectPointer(b.Labels), "equal labels are one map")
	assert.NotEqual(t, reflectPointer(a.Labels), reflectPointer(other.Labels))
	assert.Equal(t, "2", other.Labels["pod-template-hash"])
	assert.Equal(t, reflectPointer(a.Spec.Containers[0].Resources.Requests), reflectPointer(other.Spec.Containers[0].Resources.Requests))
	assert.Equal(t, unsafe.StringData(a.Spec.Containers[0].Image), unsafe.StringData(b.Spec.Containers[0].Image), "equal strings are one allocation")
}

func reflectPointer(m any) uintptr { return reflect.ValueOf(m).Pointer() }
