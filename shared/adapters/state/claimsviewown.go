package state

import (
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// A store's own claim writes reach its ClaimsView (WithClaimsView) without a read. A launch's claims are
// written by the same warm process that lists them next: without this, each shard it wrote would be
// queried again on its next read although the view could know exactly what changed.
//
// How the view stays an answer of a whole read. Each shard's kept counter value is the value the counter
// had when its items were read. A committed transaction of the store's own adds one to the counter of
// every shard it touched (claimTxn.counters), so the view adds one to its kept value and applies the
// written items to its kept items. If no other writer wrote the shard since, the counter now equals the
// kept value and the kept items are the stored ones; if another writer did, the counter is past the
// kept value and the shard is queried again, as before. A write whose answer was lost (an error, though
// it may have committed) is not applied: the counter then differs and the shard is read.
//
// Own writes and reads exclude each other (ownWrites is held shared by writes while they commit and
// note what they wrote, exclusively by a read): so no read can take a counter value that already
// counts an own write whose items are not yet noted, which would count that write twice and hide
// another writer's write behind it.

// liveWrite is what one own write did to the live claims: the item stored under name in shard, or nil
// when the claim left its live shard (it moved to deleted).
type liveWrite struct {
	shard int
	name  string
	item  map[string]types.AttributeValue
}

// ownWrite is one committed transaction of the store's own: its live writes and the shards whose
// counters it incremented.
type ownWrite struct {
	writes []liveWrite
	shards []int
}

// beginOwnWrite is called before an own transaction commits; the returned func after it, with whether it
// committed.
func (v *ClaimsView) beginOwnWrite(t *claimTxn) func(committed bool) {
	v.ownWrites.RLock()
	return func(committed bool) {
		defer v.ownWrites.RUnlock()
		if !committed {
			return
		}
		w := ownWrite{writes: t.live}
		for k := range t.shards {
			w.shards = append(w.shards, k)
		}
		v.pendingMu.Lock()
		v.pending = append(v.pending, w)
		v.pendingMu.Unlock()
	}
}

// applyOwnWrites brings the kept shards forward by the own writes noted since the last read. The caller
// holds mu and ownWrites.
func (v *ClaimsView) applyOwnWrites() {
	v.pendingMu.Lock()
	pending := v.pending
	v.pending = nil
	v.pendingMu.Unlock()
	for _, w := range pending {
		for _, k := range w.shards {
			kept := &v.kept[k]
			if !kept.read {
				continue
			}
			n := int64(0)
			if kept.changes != "" {
				var err error
				if n, err = strconv.ParseInt(kept.changes, 10, 64); err != nil {
					*kept = keptShard{} // read it again
					continue
				}
			}
			kept.changes = strconv.FormatInt(n+1, 10)
		}
		for _, lw := range w.writes {
			if v.kept[lw.shard].read {
				v.kept[lw.shard].items = replaceItem(v.kept[lw.shard].items, lw.name, lw.item)
			}
		}
	}
}

// replaceItem puts item in place of the item of that name (SortKey) in items, or appends it; a nil item
// removes it.
func replaceItem(items []map[string]types.AttributeValue, name string, item map[string]types.AttributeValue) []map[string]types.AttributeValue {
	for i, it := range items {
		if sk, ok := it[SortKey].(*types.AttributeValueMemberS); ok && sk.Value == name {
			if item == nil {
				return append(items[:i:i], items[i+1:]...)
			}
			items[i] = item
			return items
		}
	}
	if item == nil {
		return items
	}
	return append(items, item)
}
