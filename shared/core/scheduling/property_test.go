package scheduling_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/core/scheduling"
	. "github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
)

// randomInput builds a random but valid input: pools with random taints, zone and arch requirements and
// CPU limits; pods with random sizes, selectors and tolerations; a daemonset; the realistic catalog.
func randomInput(seed uint64) scheduling.Input {
	r := rand.New(rand.NewPCG(seed, 99))
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	var nodePools []scheduling.NodePool
	for i := range 1 + r.IntN(3) {
		var opts []func(*scheduling.NodePool)
		opts = append(opts, Weight(int32(r.IntN(3)*10)))
		if r.IntN(2) == 0 {
			opts = append(opts, Taint("team", pick("a", "b"), corev1.TaintEffectNoSchedule))
		}
		if r.IntN(2) == 0 {
			opts = append(opts, Requirement(scheduling.LabelZone, scheduling.OpIn, pick(Zones...)))
		}
		if r.IntN(2) == 0 {
			opts = append(opts, Requirement(scheduling.LabelArch, scheduling.OpIn, pick("amd64", "arm64")))
		}
		if r.IntN(3) == 0 {
			opts = append(opts, Limits("cpu", fmt.Sprint(50+r.IntN(200))))
		}
		nodePools = append(nodePools, NodePool(fmt.Sprintf("pool-%d", i), opts...))
	}
	var pods []*corev1.Pod
	for i := range 50 + r.IntN(150) {
		o := PodOptions{Name: fmt.Sprintf("p-%d", i), CPU: fmt.Sprintf("%dm", 100+r.IntN(8000)), Memory: fmt.Sprintf("%dMi", 100+r.IntN(30000))}
		if r.IntN(3) == 0 {
			o.NodeSelector = map[string]string{scheduling.LabelZone: pick(Zones...)}
		}
		if r.IntN(3) == 0 {
			o.NodeRequirements = []corev1.NodeSelectorRequirement{In(scheduling.LabelArch, pick("amd64", "arm64"))}
		}
		if r.IntN(2) == 0 {
			o.Tolerations = []corev1.Toleration{{Key: "team", Operator: corev1.TolerationOpEqual, Value: pick("a", "b")}}
		}
		pods = append(pods, Pod(o))
	}
	return scheduling.Input{Pods: pods, NodePools: nodePools, InstanceTypes: RealisticInstanceTypes(),
		DaemonSets: []*appsv1.DaemonSet{DaemonSet("agent", "200m", "256Mi", corev1.Toleration{Operator: corev1.TolerationOpExists})}}
}

// withReservations gives half of the random inputs a few capacity reservations (1 to 5 instances) on
// random types and zones of the catalog, and returns how many instances each takes.
func withReservations(in scheduling.Input, seed uint64) (scheduling.Input, map[string]int) {
	r := rand.New(rand.NewPCG(seed, 7))
	counts := map[string]int{}
	if r.IntN(2) == 0 {
		return in, counts
	}
	types := slices.Clone(in.InstanceTypes)
	for i := range 1 + r.IntN(4) {
		j := r.IntN(len(types))
		it := types[j]
		id := fmt.Sprintf("cr-%d", i)
		counts[id] = 1 + r.IntN(5)
		od, _ := it.CheapestOffering(scheduling.NewRequirements(scheduling.MustRequirement(scheduling.LabelCapacityType, scheduling.OpIn, scheduling.CapacityTypeOnDemand)), nil)
		offerings := append(slices.Clone(it.Offerings), scheduling.Offering{Zone: Zones[r.IntN(len(Zones))], CapacityType: scheduling.CapacityTypeReserved,
			Price: od.Price / 1e7, Available: true, ReservationID: id, ReservationCapacity: counts[id]})
		types[j] = scheduling.NewInstanceType(it.Name, it.Requirements.Labels(), it.Capacity, it.Allocatable, offerings)
	}
	in.InstanceTypes = types
	return in, counts
}

// TestPlanInvariants checks, over random inputs, that every pod is placed once or reported, that every
// instance-type option of every claim holds its pods plus daemon overhead, that pods' requirements and
// the NodePool's taints hold, that NodePool CPU limits are respected, and that no capacity reservation
// gets more claims than it has instances left.
func TestPlanInvariants(t *testing.T) {
	types := map[string]*scheduling.InstanceType{}
	for _, it := range RealisticInstanceTypes() {
		types[it.Name] = it
	}
	daemon := scheduling.Resources{CPU: 200, Memory: 256 << 20, Pods: 1}
	for seed := range uint64(40) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			in, reservations := withReservations(randomInput(seed), seed)
			plan, err := scheduling.Solve(in)
			require.NoError(t, err)
			pools := map[string]scheduling.NodePool{}
			for _, p := range in.NodePools {
				pools[p.Name] = p
			}
			seen := map[string]int{}
			usedCPU := map[string]int64{}
			reserved := map[string]int{}
			for _, c := range plan.NewClaims {
				if c.CapacityType == scheduling.CapacityTypeReserved {
					reserved[c.ReservationID]++
					assert.Contains(t, reservations, c.ReservationID, "%s launches into a known reservation", c.Name)
				}
				pool := pools[c.NodePool]
				reqs, err := scheduling.RequirementsFromSpecs(c.Requirements)
				require.NoError(t, err)
				var maxCPU int64
				for _, name := range c.InstanceTypeOptions {
					it := types[name]
					assert.True(t, c.Requests.Add(daemon).Fits(it.Allocatable), "%s: %s + daemon on %s", c.Name, c.Requests, name)
					assert.NoError(t, it.Requirements.Intersects(reqs), "%s: option %s", c.Name, name)
					maxCPU = max(maxCPU, it.Capacity.CPU)
				}
				usedCPU[c.NodePool] += maxCPU
				for _, p := range c.Pods {
					seen[p.Namespace+"/"+p.Name]++
					assert.NoError(t, scheduling.Tolerates(p.Spec.Tolerations, pool.Taints, false), "%s on %s", p.Name, c.Name)
					steps, err := scheduling.RelaxationSteps(p, false)
					require.NoError(t, err)
					assert.NoError(t, reqs.Intersects(steps[len(steps)-1].Requirements), "%s on %s", p.Name, c.Name)
					if z, ok := p.Spec.NodeSelector[scheduling.LabelZone]; ok {
						assert.Equal(t, z, c.Zone, "%s launches in its zone", p.Name)
					}
				}
			}
			for _, f := range plan.Unschedulable {
				seen[f.PodName]++
				assert.NotEmpty(t, f.Reason)
			}
			assert.Len(t, seen, len(in.Pods))
			for name, n := range seen {
				assert.Equal(t, 1, n, name)
			}
			for id, n := range reserved {
				assert.LessOrEqual(t, n, reservations[id], "claims in reservation %s", id)
			}
			for name, p := range pools {
				if q, ok := p.Limits[corev1.ResourceCPU]; ok {
					assert.LessOrEqual(t, usedCPU[name], q.MilliValue(), "pool %s CPU limit", name)
				}
			}
		})
	}
}
