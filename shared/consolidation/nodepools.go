package consolidation

import (
	"fmt"
	"time"

	"github.com/nodewright/nodewright/shared/apis"
	"github.com/nodewright/nodewright/shared/disruption"
	"github.com/nodewright/nodewright/shared/provisioning"
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
		np := byName[s.Name]
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
					return nil, fmt.Errorf("NodePool %s: spec.disruption.budgets[%d].duration: %w", s.Name, i, err)
				}
				eb.Duration = v
			}
			p.Budgets = append(p.Budgets, eb)
		}
		out = append(out, p)
	}
	return out, nil
}
