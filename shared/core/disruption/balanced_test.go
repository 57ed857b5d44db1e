package disruption_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/core/disruption"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
)

// balancedCatalog has on-demand types in the first zone priced in binary fractions, so that scores
// come out exact: tiny $0.25/h (2 CPU), big $1/h (8 CPU), huge $3/h (16 CPU).
func balancedCatalog() []*scheduling.InstanceType {
	const gib = int64(1) << 30
	var out []*scheduling.InstanceType
	for _, s := range []struct {
		name  string
		cpu   int64
		price float64
	}{{"tiny", 2, 0.25}, {"big", 8, 1}, {"huge", 16, 3}} {
		capacity := scheduling.Resources{CPU: s.cpu * 1000, Memory: 4 * s.cpu * gib, EphemeralStorage: 20 * gib, Pods: 110}
		alloc := capacity.Sub(scheduling.Resources{CPU: 100, Memory: 512 << 20})
		offs := []scheduling.Offering{{Zone: schedulingtest.Zones[0], CapacityType: scheduling.CapacityTypeOnDemand, Price: s.price, Available: true}}
		out = append(out, scheduling.NewInstanceType(s.name, map[string]string{scheduling.LabelArch: "amd64", scheduling.LabelOS: "linux"}, capacity, alloc, offs))
	}
	return out
}

// balancedPool is a Balanced NodePool launching on-demand amd64 nodes, every node allowed to go.
func balancedPool(name string) disruption.NodePool {
	return pool(name, policy(disruption.Balanced), onDemandOnly, amd64Only, unlimitedBudget)
}

// bystander is a node of the pool that is not initialized: it is no candidate and takes no moved
// pod, but its price and pods count in the pool's totals.
func bystander(catalog []*scheduling.InstanceType, name, poolName string, price float64, pods ...*corev1.Pod) disruption.Node {
	n := node(catalog, nodeSpec{name, poolName, "big", scheduling.CapacityTypeOnDemand, pods})
	n.Initialized, n.Price = false, price
	return n
}

func withPriority(p *corev1.Pod, v int32) *corev1.Pod {
	p.Spec.Priority = &v
	return p
}

// TestBalancedApprovesAtThreshold replaces node a ($1/h, one pod) by a tiny node ($0.25/h): it saves
// $0.75/h of its pool's $3/h (25%) for a disruption cost of 2 of the pool's 4 (50%): score exactly
// 0.5 = 1/k, approved. One pod of priority 1 on a raises its cost by 2^-25 and the move falls just
// below the threshold: rejected after its simulation (deleting it would pass, so the pre-filter lets
// it through).
func TestBalancedApprovesAtThreshold(t *testing.T) {
	catalog := balancedCatalog()
	cluster := func(aPod *corev1.Pod) disruption.Input {
		return disruption.Input{Now: now, InstanceTypes: catalog, NodePools: []disruption.NodePool{balancedPool("bal")},
			Nodes: []disruption.Node{
				node(catalog, nodeSpec{"a", "bal", "big", scheduling.CapacityTypeOnDemand, []*corev1.Pod{aPod}}),
				bystander(catalog, "b", "bal", 2, pod("b-web", "1")),
			}}
	}
	t.Run("score exactly 1/k is approved", func(t *testing.T) {
		res := disruption.Decide(cluster(pod("web", "1")))
		require.Len(t, res.Commands, 1, "kept: %v", res.Kept)
		cmd := res.Commands[0]
		assert.Equal(t, disruption.ActionReplace, cmd.Action)
		assert.Equal(t, 0.75, cmd.SavingsPerHour)
		require.NotNil(t, cmd.Score)
		assert.True(t, cmd.Score.Approved)
		assert.Equal(t, 0.5, cmd.Score.Score)
		assert.Equal(t, 0.5, cmd.Score.Threshold)
		assert.Equal(t, 2, cmd.Score.K)
		assert.Equal(t, []disruption.PoolScore{{NodePool: "bal", SavingsPerHour: 0.75, DisruptionCost: 2, PoolCostPerHour: 3,
			PoolDisruptionCost: 4, SavingsFraction: 0.25, DisruptionFraction: 0.5, Score: 0.5, Approved: true}}, cmd.Score.Pools)
		assert.Contains(t, cmd.Why, "NodePool bal scores 0.50 >= 0.50 (k 2: saves 25.0% of its cost for 50.0% of its disruption cost)")
		assert.Empty(t, res.Rejected)
	})
	t.Run("score just below 1/k is rejected", func(t *testing.T) {
		res := disruption.Decide(cluster(withPriority(pod("web", "1"), 1)))
		assert.Empty(t, res.Commands)
		assert.Equal(t, 1, res.Simulations, "the pre-filter let it through: deleting it would score 0.67")
		require.Len(t, res.Rejected, 1)
		m := res.Rejected[0]
		assert.Equal(t, disruption.MethodSingle, m.Method)
		assert.Equal(t, disruption.ActionReplace, m.Action)
		assert.Equal(t, []string{"a"}, m.Nodes)
		assert.Equal(t, 0.75, m.SavingsPerHour)
		assert.False(t, m.Score.Approved)
		eps := 1.0 / (1 << 25)
		require.Len(t, m.Score.Pools, 1)
		p := m.Score.Pools[0]
		assert.Equal(t, 2+eps, p.DisruptionCost)
		assert.Equal(t, 4+eps, p.PoolDisruptionCost)
		assert.InDelta(t, 0.25*(4+eps)/(2+eps), m.Score.Score, 1e-15)
		assert.Less(t, m.Score.Score, 0.5)
		assert.Contains(t, keptReason(res, "a"), "the Balanced policy rejects the move: NodePool bal scores 0.4999999962747097 < 0.50 (k 2: saves 25.0% of its cost for 50.0% of its disruption cost)")
	})
}

// TestBalancedAttributesSavingsPerPool replaces a (pool x, $1/h) and c (pool y, $3/h) by one tiny
// node: $3.75/h saved, credited $0.9375 to x (a quarter of the nodes' price) and $2.8125 to y. With
// x's other node at $1/h, x scores 0.9375 and the move is approved; at $3/h x scores 0.46875 and x
// alone rejects it, although y approves and although x could pass had it been credited the whole
// saving (or deleting a, which the pre-filter checks: 0.5).
func TestBalancedAttributesSavingsPerPool(t *testing.T) {
	catalog := balancedCatalog()
	cluster := func(xOther float64) disruption.Input {
		return disruption.Input{Now: now, InstanceTypes: catalog,
			NodePools: []disruption.NodePool{balancedPool("x"), balancedPool("y")},
			Nodes: []disruption.Node{
				node(catalog, nodeSpec{"a", "x", "big", scheduling.CapacityTypeOnDemand, []*corev1.Pod{pod("web", "500m")}}),
				node(catalog, nodeSpec{"c", "y", "huge", scheduling.CapacityTypeOnDemand, []*corev1.Pod{pod("api", "500m")}}),
				bystander(catalog, "bx", "x", xOther, pod("bx-web", "1")),
			}}
	}
	t.Run("every pool approves", func(t *testing.T) {
		res := disruption.Decide(cluster(1))
		require.Len(t, res.Commands, 1, "kept: %v", res.Kept)
		cmd := res.Commands[0]
		assert.Equal(t, disruption.MethodMulti, cmd.Method)
		assert.Equal(t, []string{"a", "c"}, nodeNames(cmd))
		assert.Equal(t, 3.75, cmd.SavingsPerHour)
		require.NotNil(t, cmd.Score)
		assert.Equal(t, []disruption.PoolScore{
			{NodePool: "x", SavingsPerHour: 0.9375, DisruptionCost: 2, PoolCostPerHour: 2, PoolDisruptionCost: 4,
				SavingsFraction: 0.46875, DisruptionFraction: 0.5, Score: 0.9375, Approved: true},
			{NodePool: "y", SavingsPerHour: 2.8125, DisruptionCost: 2, PoolCostPerHour: 3, PoolDisruptionCost: 2,
				SavingsFraction: 0.9375, DisruptionFraction: 1, Score: 0.9375, Approved: true},
		}, cmd.Score.Pools)
		assert.Equal(t, 0.9375, cmd.Score.Score)
	})
	t.Run("one pool below the threshold rejects the whole move", func(t *testing.T) {
		res := disruption.Decide(cluster(3))
		var multi *disruption.ScoredMove
		for i := range res.Rejected {
			if res.Rejected[i].Method == disruption.MethodMulti {
				multi = &res.Rejected[i]
			}
		}
		require.NotNil(t, multi, "rejected: %+v", res.Rejected)
		assert.Equal(t, []string{"a", "c"}, multi.Nodes)
		assert.False(t, multi.Score.Approved)
		assert.Equal(t, 0.46875, multi.Score.Score)
		require.Len(t, multi.Score.Pools, 2)
		x, y := multi.Score.Pools[0], multi.Score.Pools[1]
		assert.Equal(t, 0.9375, x.SavingsPerHour)
		assert.Equal(t, 0.46875, x.Score)
		assert.False(t, x.Approved)
		assert.Equal(t, 2.8125, y.SavingsPerHour)
		assert.True(t, y.Approved)
		for _, cmd := range res.Commands {
			assert.NotEqual(t, []string{"a", "c"}, nodeNames(cmd), "the move x rejects is not taken")
		}
	})
	t.Run("pools of other policies are not scored", func(t *testing.T) {
		in := cluster(3)
		in.NodePools[0] = pool("x", onDemandOnly, amd64Only, unlimitedBudget)
		res := disruption.Decide(in)
		require.Len(t, res.Commands, 1, "kept: %v", res.Kept)
		cmd := res.Commands[0]
		assert.Equal(t, []string{"a", "c"}, nodeNames(cmd))
		require.NotNil(t, cmd.Score)
		require.Len(t, cmd.Score.Pools, 1)
		assert.Equal(t, "y", cmd.Score.Pools[0].NodePool)
	})
}

// TestBalancedPreFilterSkipsHopelessCandidates: node a costs $1/h of its pool's $8/h (12.5%) and
// carries 2 of its 4 disruption cost (50%): even deleting it scores 0.25 < 0.5, so it is kept
// without a simulation. Under WhenEmptyOrUnderutilized the same cluster simulates it.
func TestBalancedPreFilterSkipsHopelessCandidates(t *testing.T) {
	catalog := balancedCatalog()
	in := disruption.Input{Now: now, InstanceTypes: catalog, NodePools: []disruption.NodePool{balancedPool("bal")},
		Nodes: []disruption.Node{
			node(catalog, nodeSpec{"a", "bal", "big", scheduling.CapacityTypeOnDemand, []*corev1.Pod{pod("web", "1")}}),
			bystander(catalog, "b", "bal", 7, pod("b-web", "1")),
		}}
	res := disruption.Decide(in)
	assert.Empty(t, res.Commands)
	assert.Equal(t, 0, res.Simulations)
	assert.Empty(t, res.Rejected, "a candidate ruled out without a simulation is no move")
	assert.Equal(t, "no consolidation: the Balanced policy would reject even deleting it, the most any move of it can save: "+
		"NodePool bal scores 0.25 < 0.50 (k 2: saves 12.5% of its cost for 50.0% of its disruption cost)", keptReason(res, "a"))

	in.NodePools = []disruption.NodePool{pool("bal", onDemandOnly, amd64Only, unlimitedBudget)}
	res = disruption.Decide(in)
	require.Len(t, res.Commands, 1)
	assert.Equal(t, 1, res.Simulations)
	assert.Nil(t, res.Commands[0].Score, "no Balanced pool, no score")
}

// TestBalancedScoreJSON: the command's score is in its JSON, as plan --disrupt and decision records
// read it; a command of another policy has none.
func TestBalancedScoreJSON(t *testing.T) {
	catalog := balancedCatalog()
	res := disruption.Decide(disruption.Input{Now: now, InstanceTypes: catalog, NodePools: []disruption.NodePool{balancedPool("bal")},
		Nodes: []disruption.Node{
			node(catalog, nodeSpec{"a", "bal", "big", scheduling.CapacityTypeOnDemand, []*corev1.Pod{pod("web", "1")}}),
			bystander(catalog, "b", "bal", 2, pod("b-web", "1")),
		}})
	require.Len(t, res.Commands, 1)
	raw, err := json.Marshal(res.Commands[0])
	require.NoError(t, err)
	var back struct {
		Score struct {
			Score    float64 `json:"score"`
			Approved bool    `json:"approved"`
			Pools    []struct {
				NodePool string `json:"nodePool"`
			} `json:"pools"`
		} `json:"score"`
	}
	require.NoError(t, json.Unmarshal(raw, &back))
	assert.Equal(t, 0.5, back.Score.Score)
	assert.True(t, back.Score.Approved)
	require.Len(t, back.Score.Pools, 1)
	assert.Equal(t, "bal", back.Score.Pools[0].NodePool)
}

// TestBalancedValidateScoresAgain: the command approved at exactly 0.5 is re-checked on a fresh
// snapshot where the pool's other node costs $3/h instead of $2/h: the same move now saves 18.75% of
// the pool's cost for 50% of its disruption, scores 0.375, and validation refuses it.
func TestBalancedValidateScoresAgain(t *testing.T) {
	catalog := balancedCatalog()
	cluster := func(other float64) disruption.Input {
		return disruption.Input{Now: now, InstanceTypes: catalog, NodePools: []disruption.NodePool{balancedPool("bal")},
			Nodes: []disruption.Node{
				node(catalog, nodeSpec{"a", "bal", "big", scheduling.CapacityTypeOnDemand, []*corev1.Pod{pod("web", "1")}}),
				bystander(catalog, "b", "bal", other, pod("b-web", "1")),
			}}
	}
	res := disruption.Decide(cluster(2))
	require.Len(t, res.Commands, 1)
	require.NoError(t, disruption.Validate(res.Commands[0], cluster(2)))
	err := disruption.Validate(res.Commands[0], cluster(3))
	var verr *disruption.ValidationError
	require.ErrorAs(t, err, &verr)
	assert.Equal(t, disruption.ValidationScheduling, verr.Kind)
	assert.Contains(t, verr.Reason, "the Balanced policy rejects the move: NodePool bal scores 0.38 < 0.50")
}

// TestBalancedPreFilterSkipsHopelessPrefixes: two candidates ($1/h, one pod each) of a pool that costs
// $16/h: deleting both would save 12.5% of its cost for 4 of its 5 disruption cost (score 0.16), and
// each alone 6.25% for 40% (the same score), so neither multi-node nor single-node simulates anything.
func TestBalancedPreFilterSkipsHopelessPrefixes(t *testing.T) {
	catalog := balancedCatalog()
	in := disruption.Input{Now: now, InstanceTypes: catalog, NodePools: []disruption.NodePool{balancedPool("bal")},
		Nodes: []disruption.Node{
			bigUnmanaged("sink"),
			node(catalog, nodeSpec{"a1", "bal", "big", scheduling.CapacityTypeOnDemand, []*corev1.Pod{pod("web", "1")}}),
			node(catalog, nodeSpec{"a2", "bal", "big", scheduling.CapacityTypeOnDemand, []*corev1.Pod{pod("api", "1")}}),
			bystander(catalog, "b", "bal", 14),
		}}
	res := disruption.Decide(in)
	assert.Empty(t, res.Commands)
	assert.Equal(t, 0, res.Simulations)
	assert.Contains(t, keptReason(res, "a1"), "NodePool bal scores 0.16 < 0.50 (k 2: saves 6.2% of its cost for 40.0% of its disruption cost)")

	in.NodePools = []disruption.NodePool{pool("bal", onDemandOnly, amd64Only, unlimitedBudget)}
	res = disruption.Decide(in)
	require.Len(t, res.Commands, 1)
	assert.Equal(t, disruption.MethodMulti, res.Commands[0].Method, "both fit on the unmanaged node")
	assert.Positive(t, res.Simulations)
}
