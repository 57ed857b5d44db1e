package state

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/nodewright/nodewright/shared/core/apis"
)

// Config item kinds.
const (
	KindNodePool     = "NodePool"
	KindEC2NodeClass = "EC2NodeClass"
	KindNodeOverlay  = "NodeOverlay"
)

// ConfigItemsFrom turns validated, defaulted objects into the items the functions read, sorted by kind
// and name. Callers validate first (apis.DefaultAndValidate or manifest.Check).
func ConfigItemsFrom(objs apis.Objects) ([]ConfigItem, error) {
	var items []ConfigItem
	add := func(kind, name, driftHash string, obj any, static bool) error {
		spec, err := json.Marshal(obj)
		if err != nil {
			return fmt.Errorf("encoding %s %s: %w", kind, name, err)
		}
		sum := sha256.Sum256(spec)
		items = append(items, ConfigItem{Kind: kind, Name: name, DriftHash: driftHash,
			SpecHash: hex.EncodeToString(sum[:16]), Spec: string(spec), StaticPool: static})
		return nil
	}
	for _, np := range objs.NodePools {
		if err := add(KindNodePool, np.Name, apis.NodePoolTemplateHash(np), np, np.IsStatic()); err != nil {
			return nil, err
		}
	}
	for _, nc := range objs.EC2NodeClasses {
		if err := add(KindEC2NodeClass, nc.Name, apis.EC2NodeClassHash(nc), nc, false); err != nil {
			return nil, err
		}
	}
	for _, no := range objs.NodeOverlays {
		// An overlay changes what the scheduler believes of instance types, not what a node is: no drift hash.
		if err := add(KindNodeOverlay, no.Name, "", no, false); err != nil {
			return nil, err
		}
	}
	sort.Slice(items, func(i, j int) bool {
		if items[i].Kind != items[j].Kind {
			return items[i].Kind < items[j].Kind
		}
		return items[i].Name < items[j].Name
	})
	return items, nil
}

// ApplyResult says what ApplyConfig changed, by "Kind/name".
type ApplyResult struct {
	Created, Updated, Unchanged, Deleted []string
}

// ApplyConfig makes the stored configuration match items: new objects are created, changed ones (by
// SpecHash) updated with the next version, unchanged ones left alone. With prune, stored objects that are
// not in items are deleted (the settings item, KindSettings, never is: no manifest holds it) — except that an EC2NodeClass claims that are not deleted still use is not
// removed, as Karpenter's finalizer keeps it: then nothing at all is applied and the error, an
// ErrNodeClassInUse, names each such class and how many claims use it (so does a failure to list the
// claims). A changed NodePool must be a valid update of the stored one (apis.ValidateNodePoolUpdate: it
// cannot turn static or dynamic, nor change nodeClassRef's group or kind); otherwise nothing is applied
// and the error, an *UpdateRefusedError, names each field. Concurrent writers are detected by version
// (ErrConflict).
func (s *Store) ApplyConfig(ctx context.Context, items []ConfigItem, prune bool) (ApplyResult, error) {
	var res ApplyResult
	stored, err := s.ListConfig(ctx, "")
	if err != nil {
		return res, err
	}
	current := map[string]ConfigItem{}
	for _, c := range stored {
		if c.Kind != KindSettings {
			current[c.Kind+"/"+c.Name] = c
		}
	}
	if err := refuseInvalidUpdates(current, items); err != nil {
		return res, err
	}
	if prune {
		if err := s.refuseRemovingUsedClasses(ctx, stored, items); err != nil {
			return res, err
		}
	}
	for _, it := range items {
		id := it.Kind + "/" + it.Name
		old, exists := current[id]
		delete(current, id)
		switch {
		case !exists:
			it.Version = 0
			if _, err := s.PutConfig(ctx, it); err != nil {
				return res, err
			}
			res.Created = append(res.Created, id)
		case old.SpecHash == it.SpecHash:
			res.Unchanged = append(res.Unchanged, id)
		default:
			it.Version = old.Version
			if _, err := s.PutConfig(ctx, it); err != nil {
				return res, err
			}
			res.Updated = append(res.Updated, id)
		}
	}
	if prune {
		ids := make([]string, 0, len(current))
		for id := range current {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			c := current[id]
			if err := s.DeleteConfig(ctx, c.Kind, c.Name, c.Version); err != nil {
				return res, err
			}
			res.Deleted = append(res.Deleted, id)
		}
	}
	return res, nil
}
