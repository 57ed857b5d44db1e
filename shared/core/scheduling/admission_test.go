package scheduling

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestAdmit(t *testing.T) {
	small := sizedCandidate("small", 2, 4, 0.1, "a")
	big := sizedCandidate("big", 8, 16, 0.4, "a")
	mkPool := func(p NodePool) *poolState {
		ps, err := newPoolState(p, []*InstanceType{small.it, big.it}, nil, nil)
		require.NoError(t, err)
		return ps
	}
	class := func(cpu int64, tols ...corev1.Toleration) *podClass {
		return &podClass{requests: Resources{CPU: cpu, Pods: 1}, tols: tols, steps: []classStep{{Attempt: Attempt{Requirements: Requirements{}}}}}
	}
	s := &solver{strict: true}
	tests := []struct {
		name    string
		pool    NodePool
		class   *podClass
		fit     []string
		wantCon Constraint
	}{
		{name: "both fit", pool: NodePool{Name: "p"}, class: class(1000), fit: []string{"small", "big"}},
		{name: "only big fits", pool: NodePool{Name: "p"}, class: class(3000), fit: []string{"big"}},
		{name: "nothing fits", pool: NodePool{Name: "p"}, class: class(9000), wantCon: ConstraintResources},
		{name: "taint", pool: NodePool{Name: "p", Taints: []corev1.Taint{{Key: "t", Effect: corev1.TaintEffectNoSchedule}}}, class: class(1000), wantCon: ConstraintTaint},
		{name: "limits leave only small, which is too small", pool: NodePool{Name: "p", Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}}, class: class(3000), wantCon: ConstraintLimits},
		{name: "limits leave small", pool: NodePool{Name: "p", Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}}, class: class(1000), fit: []string{"small"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, r := s.admit(mkPool(tt.pool), tt.class, &tt.class.steps[0])
			if tt.wantCon != "" {
				require.NotNil(t, r)
				assert.Equal(t, tt.wantCon, r.Constraint)
				return
			}
			require.Nil(t, r)
			var names []string
			for _, c := range a.fit {
				names = append(names, c.it.Name)
			}
			assert.Equal(t, tt.fit, names)
		})
	}
}
