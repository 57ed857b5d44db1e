package scheduling

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

func sizedCandidate(name string, cpu, memGiB int64, price float64, zones ...string) *candidate {
	var offerings []Offering
	for _, z := range zones {
		offerings = append(offerings, Offering{Zone: z, CapacityType: CapacityTypeSpot, Price: price, Available: true})
	}
	usable := Resources{CPU: cpu * 1000, Memory: memGiB << 30, Pods: 100}
	return &candidate{it: NewInstanceType(name, nil, usable, usable, offerings), usable: usable, price: price}
}

func TestUnitCostAndPickTarget(t *testing.T) {
	small := sizedCandidate("small", 2, 4, 0.10, "a")
	big := sizedCandidate("big", 8, 16, 0.36, "a")
	d := demand{cpu: 16000, memory: float64(32 << 30), pods: 10}
	assert.InDelta(t, 0.80, unitCost(small, d), 1e-9)
	assert.InDelta(t, 0.72, unitCost(big, d), 1e-9)
	assert.Equal(t, big, pickTarget([]*candidate{small, big}, Resources{CPU: 1000}, d))
	assert.Equal(t, big, pickTarget([]*candidate{small, big}, Resources{CPU: 3000}, d), "only big fits")
	assert.Nil(t, pickTarget([]*candidate{small, big}, Resources{CPU: 9000}, d))
}

func TestClaimTryAdd(t *testing.T) {
	a := sizedCandidate("a-only", 4, 8, 0.1, "us-west-2a")
	both := sizedCandidate("both", 4, 8, 0.2, "us-west-2a", "us-west-2b")
	ps := &poolState{NodePool: NodePool{Name: "p"}}
	cl := &claim{pool: ps, reqs: Requirements{}, candidates: []*candidate{a, both}, target: a, sigs: map[string]bool{}}
	plain := &podClass{requests: Resources{CPU: 1000, Pods: 1}}
	plainStep := &classStep{sig: ""}
	zoneB := &podClass{requests: Resources{CPU: 1000, Pods: 1}}
	zoneBStep := &classStep{Attempt: Attempt{Requirements: NewRequirements(MustRequirement(LabelZone, OpIn, "us-west-2b"))}, sig: "zone-b"}
	ported := &podClass{requests: Resources{CPU: 100, Pods: 1}, hostPorts: []HostPort{{Port: 80, Protocol: corev1.ProtocolTCP}}}

	require.True(t, cl.tryAdd(plain, plainStep, &corev1.Pod{}, demand{}, true))
	require.True(t, cl.tryAdd(zoneB, zoneBStep, &corev1.Pod{}, demand{}, true), "narrowing to us-west-2b drops a-only and retargets")
	assert.Equal(t, both, cl.target)
	assert.Equal(t, []*candidate{both}, cl.candidates)
	assert.True(t, cl.reqs.Get(LabelZone).Has("us-west-2b"))
	assert.True(t, cl.tryAdd(ported, plainStep, &corev1.Pod{}, demand{}, true))
	assert.False(t, cl.tryAdd(ported, plainStep, &corev1.Pod{}, demand{}, true), "host port already bound")
	assert.True(t, cl.tryAdd(plain, plainStep, &corev1.Pod{}, demand{}, true))
	assert.False(t, cl.tryAdd(plain, plainStep, &corev1.Pod{}, demand{}, true), "3.1 CPU used of 4")
	assert.Equal(t, Resources{CPU: 3100, Pods: 4}, cl.requests)
	assert.Len(t, cl.pods, 4)
}

// TestMaxResourcesIsFoldedMax: maxResources gives what folding Resources.Max from zero gives,
// extended resources (some negative, some on one candidate only) included.
func TestMaxResourcesIsFoldedMax(t *testing.T) {
	cands := []*candidate{
		{usable: Resources{CPU: 4000, Memory: 8 << 30, Pods: 29}},
		{usable: Resources{CPU: 2000, Memory: 16 << 30, EphemeralStorage: 20 << 30, Pods: 58, Extended: map[string]int64{"nvidia.com/gpu": 1, "x": -2}}},
		{usable: Resources{CPU: 8000, Memory: 4 << 30, Pods: 8, Extended: map[string]int64{"nvidia.com/gpu": 4, "y": -1}}},
	}
	var want Resources
	for _, c := range cands {
		want = want.Max(c.usable)
	}
	assert.Equal(t, want, maxResources(cands, func(c *candidate) Resources { return c.usable }))
	assert.Equal(t, Resources{}, maxResources(cands[:1][:0], func(c *candidate) Resources { return c.usable }))
	plain := maxResources(cands[:1], func(c *candidate) Resources { return c.usable })
	assert.Nil(t, plain.Extended, "no extended resources, no map")
}
