package lifecycle

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/flows/provisioning"
)

// PoolUsage is what a NodePool's Nodes add up to against its limits, as Karpenter reports in a NodePool's
// status.resources and its nodepools usage and limit metrics.
type PoolUsage struct {
	NodePool string `json:"nodePool"`
	Nodes    int    `json:"nodes"`
	// Used sums the Nodes' capacity (cpu, memory, pods and extended resources), with "nodes" counted too.
	Used corev1.ResourceList `json:"used"`
	// Limits are the NodePool's limits (nil: unlimited); Fraction is Used/Limit per limited resource.
	Limits   corev1.ResourceList `json:"limits,omitempty"`
	Fraction map[string]float64  `json:"fraction,omitempty"`
	// Exceeded names the limited resources the Nodes already exceed (the solver launches nothing more
	// for them; a limit lowered below usage shows up here).
	Exceeded []string `json:"exceeded,omitempty"`
}

// Usage sums the capacity of the Nodes labelled for each configured NodePool (Nodes being deleted do not
// count), sorted by NodePool name. Pools without Nodes are listed too, with zero usage. Only Nodes one of
// claims stands for count: Karpenter's Nodes carry the same label, with the same NodePool names during a
// migration, and use up none of Nodewright's limits (the provisioner does not count them either).
func Usage(nodes []*corev1.Node, claims []state.Claim, pools map[string]scheduling.NodePool) []PoolUsage {
	byPool := map[string]*PoolUsage{}
	for name, p := range pools {
		byPool[name] = &PoolUsage{NodePool: name, Used: corev1.ResourceList{}, Limits: p.Limits}
	}
	index := provisioning.NewClaimIndex(claims)
	for _, n := range nodes {
		u := byPool[n.Labels[scheduling.LabelNodePool]]
		if u == nil || n.DeletionTimestamp != nil {
			continue
		}
		if _, ours := index.Of(n); !ours {
			continue
		}
		u.Nodes++
		for name, q := range n.Status.Capacity {
			sum := u.Used[name]
			sum.Add(q)
			u.Used[name] = sum
		}
	}
	out := make([]PoolUsage, 0, len(byPool))
	for _, u := range byPool {
		u.Used["nodes"] = *resource.NewQuantity(int64(u.Nodes), resource.DecimalSI)
		for name, limit := range u.Limits {
			used := u.Used[name]
			if limit.IsZero() {
				if !used.IsZero() {
					u.Exceeded = append(u.Exceeded, string(name))
				}
				continue
			}
			if u.Fraction == nil {
				u.Fraction = map[string]float64{}
			}
			u.Fraction[string(name)] = used.AsApproximateFloat64() / limit.AsApproximateFloat64()
			if used.Cmp(limit) > 0 {
				u.Exceeded = append(u.Exceeded, string(name))
			}
		}
		sort.Strings(u.Exceeded)
		out = append(out, *u)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].NodePool < out[j].NodePool })
	return out
}
