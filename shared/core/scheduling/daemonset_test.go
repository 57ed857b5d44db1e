package scheduling

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func testDaemonSet(name, cpu string, mutate func(*corev1.PodSpec)) *appsv1.DaemonSet {
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system", UID: types.UID("ds-" + name)}}
	ds.Spec.Template.Spec.Containers = []corev1.Container{{Name: name, Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}},
		Ports: []corev1.ContainerPort{{ContainerPort: 9100, HostPort: 9100}}}}
	if mutate != nil {
		mutate(&ds.Spec.Template.Spec)
	}
	return ds
}

func TestDaemonOverhead(t *testing.T) {
	tainted := []corev1.Taint{{Key: "dedicated", Effect: corev1.TaintEffectNoSchedule}}
	soft := []corev1.Taint{{Key: "soft", Effect: corev1.TaintEffectPreferNoSchedule}}
	amd := NewRequirements(MustRequirement(LabelArch, OpIn, "amd64"))
	daemons := newDaemons([]*appsv1.DaemonSet{
		testDaemonSet("everywhere", "100m", func(s *corev1.PodSpec) { s.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}} }),
		testDaemonSet("plain", "200m", nil),
		testDaemonSet("arm-only", "400m", func(s *corev1.PodSpec) { s.NodeSelector = map[string]string{LabelArch: "arm64"} }),
		testDaemonSet("amd-or-arm", "800m", func(s *corev1.PodSpec) {
			s.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
				{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: LabelArch, Operator: corev1.NodeSelectorOpIn, Values: []string{"arm64"}}}},
				{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: LabelArch, Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}}}},
			}}}}
		}),
	})
	require.Len(t, daemons, 4)
	tests := []struct {
		name    string
		taints  []corev1.Taint
		reqs    Requirements
		wantCPU int64
	}{
		{name: "untainted amd64 node", reqs: amd, wantCPU: 100 + 200 + 800},
		{name: "tainted node only gets the tolerating daemon", taints: tainted, reqs: amd, wantCPU: 100},
		{name: "PreferNoSchedule taints do not keep daemons off", taints: soft, reqs: amd, wantCPU: 100 + 200 + 800},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ports := daemonOverhead(daemons, tt.taints, tt.reqs)
			assert.Equal(t, tt.wantCPU, got.CPU)
			assert.Equal(t, int64(len(ports)), got.Pods, "one host port per daemon in this test")
		})
	}
}

func TestDaemonRunsOn(t *testing.T) {
	d := newDaemons([]*appsv1.DaemonSet{testDaemonSet("agent", "100m", nil)})[0]
	running := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", OwnerReferences: []metav1.OwnerReference{{Kind: "DaemonSet", Name: "agent", UID: d.ds.UID}}}}
	other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", OwnerReferences: []metav1.OwnerReference{{Kind: "DaemonSet", Name: "other", UID: "x"}}}}
	assert.True(t, d.runsOn([]*corev1.Pod{other, running}))
	assert.False(t, d.runsOn([]*corev1.Pod{other}))
}
