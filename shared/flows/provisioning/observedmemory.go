package provisioning

import (
	"context"
	"fmt"

	"github.com/nodewright/nodewright/shared/adapters/instancetypes"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// MemoryReader reads the memory capacity registered Nodes reported per instance type and AMI (the
// lifecycle records it); *state.Store satisfies it.
type MemoryReader interface {
	MemoryObservations(ctx context.Context) ([]state.MemoryObservation, error)
}

// observedMemory are the observations a run plans with, by state.MemoryObservation.Key.
type observedMemory map[string]state.MemoryObservation

// readObservedMemory reads every observation: one query of their partition per run (an item per
// instance type and AMI launched within 60 days, hundreds at most), never one per type. A failed read is
// an error, as the other reads of a run: planning with the estimate where a smaller observation exists
// would place pods on nodes that cannot hold them.
func readObservedMemory(ctx context.Context, r MemoryReader) (observedMemory, error) {
	list, err := r.MemoryObservations(ctx)
	if err != nil {
		return nil, err
	}
	out := make(observedMemory, len(list))
	for _, o := range list {
		out[o.Key()] = o
	}
	return out, nil
}

// withObservedMemory gives each of a class's instance types the memory a registered Node of that type
// reported when launched from the AMI the class launches the type with now (pickAMI, the launch's own
// choice), and keeps the estimate for the others: a type whose AMI changed, or that never registered, is
// estimated. used names the observation each replaced type rests on. A class whose AMI requirements do
// not parse keeps the estimates (its launches fail on them, saying so).
func withObservedMemory(cat *instancetypes.Catalog, cfg scheduling.NodeClassConfig, types []*scheduling.InstanceType,
	amis []apis.AMIStatus, observed observedMemory) (_ []*scheduling.InstanceType, used map[string]state.MemoryObservation, err error) {
	if len(observed) == 0 || len(types) == 0 {
		return types, nil, nil
	}
	choices, err := amiRequirements(amis)
	if err != nil {
		return types, nil, nil
	}
	used, bytes := map[string]state.MemoryObservation{}, map[string]int64{}
	for _, it := range types {
		image := pickAMI(choices, it)
		if image == "" {
			continue
		}
		if o, ok := observed[state.MemoryObservation{InstanceType: it.Name, ImageID: image}.Key()]; ok {
			used[it.Name], bytes[it.Name] = o, o.MemoryBytes
		}
	}
	types, err = cat.WithObservedMemory(types, cfg, bytes)
	if err != nil {
		return nil, nil, err
	}
	return types, used, nil
}

// memorySource says where an instance type's memory capacity came from, for the launch decision.
func (rc *readyClass) memorySource(instanceType string) string {
	if o, ok := rc.memory[instanceType]; ok {
		return fmt.Sprintf("observed: %dMi, reported by Node %s launched from %s on %s", o.MemoryBytes>>20, o.Node, o.ImageID,
			o.ObservedAt.UTC().Format("2006-01-02"))
	}
	if it := rc.byName[instanceType]; it != nil {
		return fmt.Sprintf("estimated: %dMi (nominal memory less vmMemoryOverheadPercent %g; no registered Node of this type and AMI reported yet)",
			it.Capacity.Memory>>20, rc.overhead)
	}
	return ""
}
