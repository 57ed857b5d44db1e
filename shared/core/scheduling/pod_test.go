package scheduling_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
)

func container(name, cpu, memory string) corev1.Container {
	return corev1.Container{Name: name, Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory),
	}}}
}

func sidecar(name, cpu, memory string) corev1.Container {
	c := container(name, cpu, memory)
	always := corev1.ContainerRestartPolicyAlways
	c.RestartPolicy = &always
	return c
}

func TestPodRequests(t *testing.T) {
	const mi = int64(1) << 20
	tests := []struct {
		name   string
		mutate func(*corev1.Pod)
		want   scheduling.Resources
	}{
		{name: "containers are summed", mutate: func(p *corev1.Pod) {
			p.Spec.Containers = []corev1.Container{container("a", "500m", "100Mi"), container("b", "250m", "50Mi")}
		}, want: scheduling.Resources{CPU: 750, Memory: 150 * mi, Pods: 1}},
		{name: "a larger init container wins", mutate: func(p *corev1.Pod) {
			p.Spec.Containers = []corev1.Container{container("a", "500m", "100Mi")}
			p.Spec.InitContainers = []corev1.Container{container("init", "2", "50Mi")}
		}, want: scheduling.Resources{CPU: 2000, Memory: 100 * mi, Pods: 1}},
		{name: "sidecars add to containers and to later init containers", mutate: func(p *corev1.Pod) {
			p.Spec.Containers = []corev1.Container{container("a", "500m", "100Mi")}
			p.Spec.InitContainers = []corev1.Container{sidecar("proxy", "100m", "20Mi"), container("migrate", "1", "10Mi")}
		}, want: scheduling.Resources{CPU: 1100, Memory: 120 * mi, Pods: 1}},
		{name: "an init container before a sidecar does not include it", mutate: func(p *corev1.Pod) {
			p.Spec.Containers = []corev1.Container{container("a", "100m", "10Mi")}
			p.Spec.InitContainers = []corev1.Container{container("first", "1", "10Mi"), sidecar("proxy", "100m", "20Mi")}
		}, want: scheduling.Resources{CPU: 1000, Memory: 30 * mi, Pods: 1}},
		{name: "overhead is added", mutate: func(p *corev1.Pod) {
			p.Spec.Containers = []corev1.Container{container("a", "500m", "100Mi")}
			p.Spec.Overhead = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("120Mi")}
		}, want: scheduling.Resources{CPU: 750, Memory: 220 * mi, Pods: 1}},
		{name: "a limit without a request counts as the request", mutate: func(p *corev1.Pod) {
			p.Spec.Containers = []corev1.Container{{Name: "a", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("1"), scheduling.ResourceNVIDIAGPU: resource.MustParse("2"),
			}}}}
		}, want: scheduling.Resources{CPU: 1000, Pods: 1, Extended: map[string]int64{scheduling.ResourceNVIDIAGPU: 2}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := schedulingtest.Pod(schedulingtest.PodOptions{})
			tt.mutate(pod)
			assert.Equal(t, tt.want, scheduling.PodRequests(pod))
		})
	}
}

func TestIsProvisionable(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*corev1.Pod)
		want   bool
	}{
		{name: "unschedulable pending pod", want: true},
		{name: "bound", mutate: func(p *corev1.Pod) { p.Spec.NodeName = "n1" }},
		{name: "nominated (preempting)", mutate: func(p *corev1.Pod) { p.Status.NominatedNodeName = "n1" }},
		{name: "not yet marked by kube-scheduler", mutate: func(p *corev1.Pod) { p.Status.Conditions = nil }},
		{name: "other PodScheduled reason", mutate: func(p *corev1.Pod) { p.Status.Conditions[0].Reason = "SchedulingGated" }},
		{name: "daemonset pod", mutate: func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{{Kind: "DaemonSet", Name: "ds"}}
		}},
		{name: "static pod", mutate: func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{{Kind: "Node", Name: "n1"}}
		}},
		{name: "mirror pod", mutate: func(p *corev1.Pod) {
			p.Annotations = map[string]string{"kubernetes.io/config.mirror": "abc"}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := schedulingtest.Pod(schedulingtest.PodOptions{CPU: "1"})
			if tt.mutate != nil {
				tt.mutate(pod)
			}
			assert.Equal(t, tt.want, scheduling.IsProvisionable(pod))
		})
	}
}

func TestValidatePod(t *testing.T) {
	tests := []struct {
		name    string
		opts    schedulingtest.PodOptions
		mutate  func(*corev1.Pod)
		wantErr string
	}{
		{name: "plain pod"},
		{name: "well-known selector", opts: schedulingtest.PodOptions{NodeSelector: map[string]string{scheduling.LabelZone: "us-west-2a", scheduling.LabelNodePool: "default"}}},
		{name: "hostname selector", opts: schedulingtest.PodOptions{NodeSelector: map[string]string{scheduling.LabelHostname: "n1"}}, wantErr: "restricted label"},
		{name: "karpenter.sh custom key in affinity", opts: schedulingtest.PodOptions{NodeRequirements: []corev1.NodeSelectorRequirement{schedulingtest.In("karpenter.sh/foo", "x")}}, wantErr: "restricted label"},
		{name: "bad Gt value", opts: schedulingtest.PodOptions{NodeRequirements: []corev1.NodeSelectorRequirement{schedulingtest.Req(scheduling.LabelInstanceCPU, corev1.NodeSelectorOpGt, "four")}}, wantErr: "needs an integer"},
		{name: "matchFields", mutate: func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"n1"}}}}},
			}}}
		}, wantErr: "matchFields"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := schedulingtest.Pod(tt.opts)
			if tt.mutate != nil {
				tt.mutate(pod)
			}
			err := scheduling.ValidatePod(pod)
			if tt.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, tt.wantErr)
		})
	}
}
