package scheduling_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodewright/nodewright/shared/core/scheduling"
	. "github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
)

func TestCheckQuantity(t *testing.T) {
	tests := []struct {
		name     string
		resource corev1.ResourceName
		value    string
		err      string
	}{
		{name: "zero", resource: corev1.ResourceCPU, value: "0"},
		{name: "a core", resource: corev1.ResourceCPU, value: "1"},
		{name: "the largest CPU", resource: corev1.ResourceCPU, value: "9007199254740992m"},
		{name: "negative CPU", resource: corev1.ResourceCPU, value: "-1", err: "-1 is negative"},
		{name: "negative millicores", resource: corev1.ResourceCPU, value: "-1m", err: "-1m is negative"},
		{name: "CPU that overflows millicores", resource: corev1.ResourceCPU, value: "1e18", err: "1e18 is too large (at most 9007199254740992m)"},
		{name: "CPU one past the bound", resource: corev1.ResourceCPU, value: "9007199254740993m", err: "is too large"},
		{name: "memory that overflows bytes", resource: corev1.ResourceMemory, value: "1e19", err: "10e18 is too large (at most 8Pi)"},
		{name: "memory at 8Pi", resource: corev1.ResourceMemory, value: "8Pi"},
		{name: "huge exponent", resource: corev1.ResourceEphemeralStorage, value: "1E", err: "is too large"},
		{name: "negative extended", resource: "nvidia.com/gpu", value: "-2", err: "-2 is negative"},
		{name: "large extended", resource: "nvidia.com/gpu", value: "10e15", err: "is too large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := scheduling.CheckQuantity(tt.resource, resource.MustParse(tt.value))
			if tt.err == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.err)
		})
	}
}

func TestValidatePodResources(t *testing.T) {
	q := resource.MustParse
	container := func(name string, req, lim corev1.ResourceList) corev1.Container {
		return corev1.Container{Name: name, Resources: corev1.ResourceRequirements{Requests: req, Limits: lim}}
	}
	tests := []struct {
		name string
		spec corev1.PodSpec
		err  string
	}{
		{name: "ordinary requests", spec: corev1.PodSpec{Containers: []corev1.Container{container("app", corev1.ResourceList{"cpu": q("1"), "memory": q("1Gi")}, nil)}}},
		{name: "negative request", spec: corev1.PodSpec{Containers: []corev1.Container{container("app", corev1.ResourceList{"cpu": q("-1")}, nil)}},
			err: "container app: resources.requests.cpu: -1 is negative"},
		{name: "overflowing request", spec: corev1.PodSpec{Containers: []corev1.Container{container("app", corev1.ResourceList{"cpu": q("1e18")}, nil)}},
			err: "container app: resources.requests.cpu: 1e18 is too large (at most 9007199254740992m)"},
		{name: "negative limit", spec: corev1.PodSpec{Containers: []corev1.Container{container("app", nil, corev1.ResourceList{"memory": q("-1Gi")})}},
			err: "container app: resources.limits.memory: -1Gi is negative"},
		{name: "init container", spec: corev1.PodSpec{InitContainers: []corev1.Container{container("setup", corev1.ResourceList{"ephemeral-storage": q("1e30")}, nil)}},
			err: "init container setup: resources.requests.ephemeral-storage: 1e30 is too large (at most 8Pi)"},
		{name: "overhead", spec: corev1.PodSpec{Overhead: corev1.ResourceList{"cpu": q("-250m")}}, err: "overhead.cpu: -250m is negative"},
		{name: "requests that add up past the bound", spec: corev1.PodSpec{Containers: []corev1.Container{
			container("a", corev1.ResourceList{"memory": q("6Pi")}, nil), container("b", corev1.ResourceList{"memory": q("6Pi")}, nil)}},
			err: "requests of all containers and overhead add up to more than 8Pi of memory"},
		{name: "extended requests that add up past the bound", spec: corev1.PodSpec{Containers: []corev1.Container{
			container("a", corev1.ResourceList{"example.com/dev": q("6e15")}, nil), container("b", corev1.ResourceList{"example.com/dev": q("6e15")}, nil)}},
			err: "requests of all containers and overhead add up to more than 9007199254740992 of example.com/dev"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := scheduling.ValidatePodResources(&corev1.Pod{Spec: tt.spec})
			if tt.err == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Equal(t, tt.err, err.Error())
		})
	}
}

// TestResourcesNeverWrap: values that reach the solver unchecked (pods and nodes read from the cluster)
// are clamped, so an overflowing request stays the largest possible one instead of wrapping to 0.
func TestResourcesNeverWrap(t *testing.T) {
	r := scheduling.ResourcesFromList(corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("1e18"), corev1.ResourceMemory: resource.MustParse("-1Gi"),
		"nvidia.com/gpu": resource.MustParse("1e40"),
	})
	assert.Equal(t, scheduling.MaxQuantity, r.CPU)
	assert.Equal(t, int64(0), r.Memory)
	assert.Equal(t, scheduling.MaxQuantity, r.Extended["nvidia.com/gpu"])
}

// TestSolveRejectsPodsWithBadRequests: a pod from the API server with an overflowing or negative
// request is reported unschedulable with the reason, and the valid pods beside it are still placed.
func TestSolveRejectsPodsWithBadRequests(t *testing.T) {
	huge := Pod(PodOptions{Name: "huge", CPU: "1e18"})
	negative := Pod(PodOptions{Name: "negative", CPU: "-1"})
	ok := Pod(PodOptions{Name: "ok", CPU: "1"})
	// Same controller and otherwise the same spec: a clamped request must not merge a bad pod into
	// a valid pod's class.
	zero := Pod(PodOptions{Name: "zero", Owner: "web"})
	negativeSibling := Pod(PodOptions{Name: "negative-sibling", Owner: "web", CPU: "-1"})
	plan, err := scheduling.Solve(scheduling.Input{
		Pods:          []*corev1.Pod{huge, negative, ok, zero, negativeSibling},
		NodePools:     []scheduling.NodePool{NodePool("default")},
		InstanceTypes: SmallCatalog(),
	})
	require.NoError(t, err)
	reasons := map[string]string{}
	for _, f := range plan.Unschedulable {
		require.Len(t, f.Rejections, 1, f.PodName)
		assert.Equal(t, scheduling.ConstraintValidation, f.Rejections[0].Constraint, f.PodName)
		reasons[f.PodName] = f.Reason
	}
	assert.Equal(t, map[string]string{
		"default/huge":             "container app: resources.requests.cpu: 1e18 is too large (at most 9007199254740992m)",
		"default/negative":         "container app: resources.requests.cpu: -1 is negative",
		"default/negative-sibling": "container app: resources.requests.cpu: -1 is negative",
	}, reasons)
	assert.GreaterOrEqual(t, plan.ClaimFor(ok), 0)
	assert.GreaterOrEqual(t, plan.ClaimFor(zero), 0)
}

// TestPodRequestsNeverWrap: however many containers request the largest quantity, the pod's requests
// stay positive.
func TestPodRequestsNeverWrap(t *testing.T) {
	pod := &corev1.Pod{}
	for range 3000 {
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("8Pi"), "example.com/dev": resource.MustParse("1e40")}}})
	}
	r := scheduling.PodRequests(pod)
	assert.Equal(t, int64(1)<<62, r.Memory)
	assert.Equal(t, int64(1)<<62, r.Extended["example.com/dev"])
	require.Error(t, scheduling.ValidatePodResources(pod))
}
