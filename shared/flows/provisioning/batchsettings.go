package provisioning

import (
	"context"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/settings"
)

// batchSettings are the settings a queue trigger's batch window comes from (Handle waits before the run
// reads the configuration): those the last run of this process read, or, before any, the stored ones,
// read now. The defaults stand in when none are stored or the read fails: the wait only helps pods
// pack, so a run never fails for it. A warm process waits by the settings of its previous run; a change
// takes effect from the run after it.
func (p *Provisioner) batchSettings(ctx context.Context, t Trigger) settings.Settings {
	if s := p.settings.Load(); s != nil {
		return *s
	}
	s := settings.Default()
	if !t.Queue() || t.Urgent {
		return s // no wait whatever the settings say
	}
	items, err := p.deps.Store.ListConfig(ctx, state.KindSettings)
	if err != nil {
		return s
	}
	for _, it := range items {
		if it.Kind != state.KindSettings {
			continue
		}
		if stored, err := decodeSettings(it); err == nil {
			s = stored
		}
	}
	p.settings.CompareAndSwap(nil, &s)
	return s
}

// remember keeps the settings a run read for the next trigger's batch window.
func (p *Provisioner) remember(s settings.Settings) { p.settings.Store(&s) }
