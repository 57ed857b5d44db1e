package scheduling

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func classPod(name, owner, cpu string, created int64) *corev1.Pod {
	yes := true
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name), CreationTimestamp: metav1.Unix(created, 0)},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu),
		}}}}},
	}
	if owner != "" {
		p.OwnerReferences = []metav1.OwnerReference{{Kind: "ReplicaSet", Name: owner, UID: types.UID("rs-" + owner), Controller: &yes}}
	}
	return p
}

func TestBuildClasses(t *testing.T) {
	pods := []*corev1.Pod{
		classPod("web-b", "web", "500m", 2),
		classPod("web-a", "web", "500m", 1),
		classPod("solo-1", "", "500m", 0),
		classPod("solo-2", "", "500m", 0),
		classPod("big", "batch", "2", 5),
	}
	tolerating := classPod("web-c", "web", "500m", 3)
	tolerating.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
	pods = append(pods, tolerating)

	classes := buildClasses(pods, nil, false, false, nil, nil)
	var got [][]string
	for _, c := range classes {
		var names []string
		for _, p := range c.pods {
			names = append(names, p.Name)
		}
		got = append(got, names)
	}
	assert.Equal(t, [][]string{
		{"big"},    // largest first
		{"solo-1"}, // pods without a controller are never merged
		{"solo-2"},
		{"web-a", "web-b"}, // same controller and spec; oldest first
		{"web-c"},          // a different toleration makes a different class
	}, got)
}

func TestNewPodClassRejectsUnsupported(t *testing.T) {
	p := classPod("p", "", "1", 0)
	p.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu"}}
	c := newPodClass("k", p, PodRequests(p), false, false)
	if assert.NotNil(t, c.invalid) {
		assert.Equal(t, ConstraintUnsupported, c.invalid.Constraint)
	}
}

func TestIgnorePreferences(t *testing.T) {
	p := classPod("p", "", "1", 0)
	p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{
		{Weight: 1, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: LabelZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"z"}}}}},
	}}}
	assert.Len(t, newPodClass("k", p, PodRequests(p), false, false).steps, 2)
	c := newPodClass("k", p, PodRequests(p), false, true)
	if assert.Len(t, c.steps, 1) {
		assert.Empty(t, c.steps[0].Requirements)
	}
	assert.NotNil(t, p.Spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution, "the input pod is not modified")
}
