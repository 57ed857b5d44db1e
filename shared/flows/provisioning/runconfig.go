package provisioning

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/nodeoverlay"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/core/settings"
)

// ConfigReader lists the stored configuration; *state.Store satisfies it.
type ConfigReader interface {
	ListConfig(ctx context.Context, kind string) ([]state.ConfigItem, error)
}

// runConfig is the configuration one run works from.
type runConfig struct {
	pools []scheduling.NodePool
	// static are the static NodePools the run keeps at their count (none while the StaticCapacity gate
	// is off); they are not among pools.
	static []staticPool
	// nodePools are the decoded NodePools by name, those the scheduler cannot use included.
	nodePools   map[string]*apis.NodePool
	poolHash    map[string]string // NodePool → template drift hash
	nodeClasses map[string]*apis.EC2NodeClass
	classHash   map[string]string       // EC2NodeClass → drift hash
	lifetimes   map[string]poolLifetime // NodePool → expireAfter and terminationGracePeriod
	// settings are the deployment's settings (settings.Default when none are stored).
	settings settings.Settings
	// region is the AWS region the run launches in (Config.Region), "" when unknown.
	region string
	// overlays are the stored NodeOverlays, ordered, when the NodeOverlay gate is on (none otherwise).
	overlays []nodeoverlay.Overlay
}

// stamp is what a claim of pool, launched now, records of the configuration (see claimStamp).
func (cfg runConfig) stamp(pool scheduling.NodePool) claimStamp {
	return claimStamp{poolHash: cfg.poolHash[pool.Name], classHash: cfg.classHash[NodeClassRefName(pool)],
		lifetime: cfg.lifetimes[pool.Name]}
}

// readConfig reads every NodePool and EC2NodeClass, and the settings. An item that does not decode, or a
// NodePool the scheduler cannot use, is left out and named in problems; settings that do not decode or
// validate are named there too, and the defaults stand in (the CDK app validated what it stored, so that
// is a table written by other means). Failing to read the table is an error (a run never decides on
// incomplete data).
func readConfig(ctx context.Context, r ConfigReader) (cfg runConfig, problems []string, err error) {
	items, err := r.ListConfig(ctx, "")
	if err != nil {
		return cfg, nil, fmt.Errorf("reading configuration: %w", err)
	}
	cfg.poolHash, cfg.nodeClasses, cfg.classHash = map[string]string{}, map[string]*apis.EC2NodeClass{}, map[string]string{}
	cfg.lifetimes, cfg.nodePools = map[string]poolLifetime{}, map[string]*apis.NodePool{}
	cfg.settings = settings.Default()
	var objs apis.Objects
	var overlays []*apis.NodeOverlay
	for _, it := range items {
		switch it.Kind {
		case state.KindNodePool:
			np := &apis.NodePool{}
			if err := json.Unmarshal([]byte(it.Spec), np); err != nil {
				problems = append(problems, fmt.Sprintf("NodePool %s: decoding stored spec: %v", it.Name, err))
				continue
			}
			objs.NodePools = append(objs.NodePools, np)
			cfg.nodePools[np.Name] = np
			cfg.poolHash[np.Name] = it.DriftHash
			cfg.lifetimes[np.Name] = lifetimeOf(np)
		case state.KindEC2NodeClass:
			nc := &apis.EC2NodeClass{}
			if err := json.Unmarshal([]byte(it.Spec), nc); err != nil {
				problems = append(problems, fmt.Sprintf("EC2NodeClass %s: decoding stored spec: %v", it.Name, err))
				continue
			}
			cfg.nodeClasses[nc.Name] = nc
			cfg.classHash[nc.Name] = it.DriftHash
		case state.KindNodeOverlay:
			no := &apis.NodeOverlay{}
			if err := json.Unmarshal([]byte(it.Spec), no); err != nil {
				problems = append(problems, fmt.Sprintf("NodeOverlay %s: decoding stored spec: %v", it.Name, err))
				continue
			}
			overlays = append(overlays, no)
		case state.KindSettings:
			s, err := decodeSettings(it)
			if err != nil {
				problems = append(problems, fmt.Sprintf("Settings %s: %v; the defaults apply", it.Name, err))
				continue
			}
			cfg.settings = s
		default:
			problems = append(problems, fmt.Sprintf("configuration item %s/%s: unknown kind", it.Kind, it.Name))
		}
	}
	for _, np := range objs.NodePools {
		pools, err := NodePoolsFrom(apis.Objects{NodePools: []*apis.NodePool{np}})
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		cfg.pools = append(cfg.pools, pools...)
	}
	if cfg.settings.FeatureGates.StaticCapacity {
		var bad []string
		cfg.static, bad = staticPoolsFrom(objs.NodePools)
		problems = append(problems, bad...)
	} else {
		for _, np := range objs.NodePools {
			if np.IsStatic() {
				problems = append(problems, fmt.Sprintf("NodePool %s is static (spec.replicas) but the StaticCapacity feature gate is off: its count is not kept", np.Name))
			}
		}
	}
	cfg.overlays, problems = readOverlays(overlays, cfg.settings, problems)
	return cfg, problems, nil
}

// readOverlays converts the stored NodeOverlays when the NodeOverlay gate is on. With the gate off none
// applies and each is named in problems (the CDK app and nodewright apply refuse to store one then, so
// that is a table written by other means or a gate turned off since); so is one that does not convert.
func readOverlays(stored []*apis.NodeOverlay, s settings.Settings, problems []string) ([]nodeoverlay.Overlay, []string) {
	if len(stored) == 0 {
		return nil, problems
	}
	if !s.FeatureGates.NodeOverlay {
		for _, no := range stored {
			problems = append(problems, fmt.Sprintf("NodeOverlay %s is not applied: the NodeOverlay feature gate is off", no.Name))
		}
		return nil, problems
	}
	var out []nodeoverlay.Overlay
	for _, no := range stored {
		o, err := nodeoverlay.FromAPI(no)
		if err != nil {
			problems = append(problems, err.Error()+"; not applied")
			continue
		}
		out = append(out, o)
	}
	return out, problems
}

// decodeSettings reads and validates a stored settings item.
func decodeSettings(it state.ConfigItem) (settings.Settings, error) {
	var s settings.Settings
	if err := json.Unmarshal([]byte(it.Spec), &s); err != nil {
		return settings.Settings{}, fmt.Errorf("decoding stored settings: %w", err)
	}
	if err := s.Validate(); err != nil {
		return settings.Settings{}, err
	}
	return s, nil
}

// ReadNodePools reads the stored NodePools as a provisioning run sees them (static ones included), for callers that need the
// labels and taints a claim's Node gets (the lifecycle function); problems and the error are readConfig's.
func ReadNodePools(ctx context.Context, r ConfigReader) ([]scheduling.NodePool, []string, error) {
	cfg, problems, err := readConfig(ctx, r)
	return withStaticViews(cfg), problems, err
}

// withStaticViews is cfg's pools and the scheduler's view of every static NodePool (whatever the
// StaticCapacity gate says: their claims' Nodes need their labels and taints all the same).
func withStaticViews(cfg runConfig) []scheduling.NodePool {
	nps := make([]*apis.NodePool, 0, len(cfg.nodePools))
	for _, np := range cfg.nodePools {
		nps = append(nps, np)
	}
	static, _ := staticPoolsFrom(nps)
	out := slices.Clone(cfg.pools)
	for _, sp := range static {
		out = append(out, sp.pool)
	}
	return out
}

// ReadNodePoolsAndSettings is ReadNodePools with the deployment's settings (settings.Default when none
// are stored, or when the stored ones do not decode: problems then names them), from the same one read.
func ReadNodePoolsAndSettings(ctx context.Context, r ConfigReader) ([]scheduling.NodePool, settings.Settings, []string, error) {
	cfg, problems, err := readConfig(ctx, r)
	return withStaticViews(cfg), cfg.settings, problems, err
}
