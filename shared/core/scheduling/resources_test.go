package scheduling

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestResourcesFromListAndBack(t *testing.T) {
	l := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("1500m"),
		corev1.ResourceMemory: resource.MustParse("2Gi"),
		corev1.ResourcePods:   resource.MustParse("3"),
		ResourceNVIDIAGPU:     resource.MustParse("1"),
	}
	r := ResourcesFromList(l)
	assert.Equal(t, Resources{CPU: 1500, Memory: 2 << 30, Pods: 3, Extended: map[string]int64{ResourceNVIDIAGPU: 1}}, r)
	assert.Equal(t, "cpu=1500m memory=2Gi pods=3 nvidia.com/gpu=1", r.String())
	back := r.List()
	assert.True(t, back.Cpu().Equal(resource.MustParse("1500m")))
	assert.True(t, back.Memory().Equal(resource.MustParse("2Gi")))
	assert.Equal(t, "none", Resources{}.String())
}

func TestResourcesArithmetic(t *testing.T) {
	a := Resources{CPU: 1000, Memory: 100, Extended: map[string]int64{"x": 1}}
	b := Resources{CPU: 500, Memory: 300, Pods: 1}
	assert.Equal(t, Resources{CPU: 1500, Memory: 400, Pods: 1, Extended: map[string]int64{"x": 1}}, a.Add(b))
	assert.Equal(t, Resources{CPU: 500, Memory: -200, Pods: -1, Extended: map[string]int64{"x": 1}}, a.Sub(b))
	assert.Equal(t, Resources{CPU: 1000, Memory: 300, Pods: 1, Extended: map[string]int64{"x": 1}}, a.Max(b))
	assert.True(t, Resources{}.IsZero())
	assert.False(t, a.IsZero())
}

func TestResourcesFits(t *testing.T) {
	capacity := Resources{CPU: 2000, Memory: 4 << 30, Pods: 10}
	tests := []struct {
		name      string
		req       Resources
		fits      bool
		exceeding []string
	}{
		{name: "fits", req: Resources{CPU: 2000, Memory: 1 << 30, Pods: 1}, fits: true},
		{name: "cpu short", req: Resources{CPU: 2001, Pods: 1}, exceeding: []string{"cpu"}},
		{name: "cpu and memory short", req: Resources{CPU: 3000, Memory: 5 << 30}, exceeding: []string{"cpu", "memory"}},
		{name: "gpu absent", req: Resources{Extended: map[string]int64{ResourceNVIDIAGPU: 1}}, exceeding: []string{ResourceNVIDIAGPU}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.fits, tt.req.Fits(capacity))
			assert.Equal(t, tt.exceeding, tt.req.Exceeding(capacity))
		})
	}
}

func TestFitsWithMatchesAddThenFits(t *testing.T) {
	gpu := func(n int64) map[string]int64 { return map[string]int64{ResourceNVIDIAGPU: n} }
	capacity := Resources{CPU: 4000, Memory: 8 << 30, Pods: 10, Extended: gpu(1)}
	cases := []struct{ r, extra Resources }{
		{Resources{CPU: 2000, Pods: 1}, Resources{CPU: 2000, Pods: 1}},
		{Resources{CPU: 2000, Pods: 1}, Resources{CPU: 2001, Pods: 1}},
		{Resources{Memory: 4 << 30}, Resources{Memory: 5 << 30}},
		{Resources{Extended: gpu(1)}, Resources{}},
		{Resources{Extended: gpu(1)}, Resources{Extended: gpu(1)}},
		{Resources{}, Resources{Extended: gpu(2)}},
		{Resources{}, Resources{Extended: map[string]int64{"example.com/fpga": 1}}},
	}
	for _, c := range cases {
		assert.Equal(t, c.r.Add(c.extra).Fits(capacity), c.r.fitsWith(c.extra, capacity), "%v + %v", c.r, c.extra)
	}
}
