package disruptionrun

import (
	"fmt"
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/disruption"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/flows/provisioning"
)

// NodePoolsFrom converts defaulted, valid NodePools into the engine's view: the scheduler's view of each
// pool (provisioning.NodePoolsFrom, so static pools are left out as they are there) with its
// consolidation policy, consolidateAfter (nil for Never) and budgets. An error names the NodePool and
// field the engine cannot use; validation refuses those before they are stored, so it means the
// configuration was written around it.
func NodePoolsFrom(objs apis.Objects) ([]disruption.NodePool, error) {
	sched, err := provisioning.NodePoolsFrom(objs)
	if err != nil {
		return nil, err
	}
	byName := map[string]*apis.NodePool{}
	for _, np := range objs.NodePools {
		if np != nil {
			byName[np.Name] = np
		}
	}
	out := make([]disruption.NodePool, 0, len(sched))
	for _, s := range sched {
		p, err := enginePool(byName[s.Name], s)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// enginePool is np in the engine's view, s being its scheduler view (only its name for a static pool):
// policy, consolidateAfter (nil for Never) and budgets.
func enginePool(np *apis.NodePool, s scheduling.NodePool) (disruption.NodePool, error) {
	d := np.Spec.Disruption
	p := disruption.NodePool{Scheduling: s, Policy: disruption.Policy(d.ConsolidationPolicy),
		ConsolidateAfter: d.ConsolidateAfter.Duration()}
	if d.ConsolidateAfter == "" {
		zero := time.Duration(0) // unset is Karpenter's default, 0s
		p.ConsolidateAfter = &zero
	}
	if d.Budgets != nil {
		p.Budgets = []disruption.Budget{}
	}
	for i, b := range d.Budgets {
		eb := disruption.Budget{Nodes: b.Nodes}
		if eb.Nodes == "" {
			eb.Nodes = apis.DefaultBudgetNodes
		}
		for _, r := range b.Reasons {
			eb.Reasons = append(eb.Reasons, disruption.Reason(r))
		}
		if b.Schedule != nil {
			eb.Schedule = *b.Schedule
		}
		if b.Duration != nil {
			v, err := b.Duration.Parse()
			if err != nil {
				return disruption.NodePool{}, fmt.Errorf("NodePool %s: spec.disruption.budgets[%d].duration: %w", s.Name, i, err)
			}
			eb.Duration = v
		}
		p.Budgets = append(p.Budgets, eb)
	}
	return p, nil
}

// staticPool is a static NodePool (spec.replicas) as the disruption run keeps it at its count: its
// budgets (pool.Scheduling holds only the name; static pools never consolidate, so the engine never
// sees them) and replicas.
type staticPool struct {
	pool     disruption.NodePool
	replicas int64
	// nodeLimit is limits.nodes, math.MaxInt64 when the pool has none.
	nodeLimit int64
}

func (p staticPool) name() string { return p.pool.Name() }

// staticPoolsFrom returns the static NodePools among objs with their budgets; an error names the
// NodePool and field that cannot be used.
func staticPoolsFrom(objs apis.Objects) ([]staticPool, error) {
	var out []staticPool
	for _, np := range objs.NodePools {
		if np == nil || !np.IsStatic() {
			continue
		}
		p, err := enginePool(np, scheduling.NodePool{Name: np.Name})
		if err != nil {
			return nil, err
		}
		sp := staticPool{pool: p, replicas: max(*np.Spec.Replicas, 0), nodeLimit: math.MaxInt64}
		if q, ok := np.Spec.Limits[corev1.ResourceName("nodes")]; ok {
			sp.nodeLimit = q.Value()
		}
		out = append(out, sp)
	}
	return out, nil
}
