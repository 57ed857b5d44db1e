package state

import (
	"context"
	"fmt"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"
)

// ClaimsView is a warm function's copy of the live claims, kept between invocations: each ListClaims
// reads the shards' change counters strongly consistent (one BatchGetItem) and queries again only the
// shards whose counter moved since it last read them; a cold view reads every shard. Its answer is the
// answer of Store.ListClaims at the time of the read:
//   - every claim write increments its shard's counter in the same transaction (claimTxn), so an
//     unchanged counter means that no live claim of the shard changed;
//   - the counters are read before the shards, so a write that lands between the two bumps a counter
//     past the one remembered, and the next read queries that shard again.
//
// Claims written before claims were sharded are moved to their shards first (migrateLegacyClaims).
//
// It keeps the items as DynamoDB returned them and decodes them on every read, so a caller that changes
// a claim it got changes nothing of the view's. Safe for concurrent use (reads are serialized).
type ClaimsView struct {
	s    *Store
	mu   sync.Mutex
	kept [ClaimShards]keptShard
	last ClaimsRead
	// ownWrites, pendingMu and pending carry the store's own writes into the view (claimsviewown.go).
	ownWrites sync.RWMutex
	pendingMu sync.Mutex
	pending   []ownWrite
}

// keptShard is what a view knows of one shard: its items as of the counter value changes.
type keptShard struct {
	read    bool
	changes string
	items   []map[string]types.AttributeValue
}

// ClaimsRead describes one read of a view: how many shards it queried, the items those queries returned
// and the read units the read cost (the legacy partition's query, the counters' and the shards'
// queries), as DynamoDB bills strongly consistent reads (see readUnits).
type ClaimsRead struct {
	ShardsQueried int
	ItemsRead     int
	ReadUnits     float64
}

// NewClaimsView returns a cold view of the store's live claims.
func (s *Store) NewClaimsView() *ClaimsView { return &ClaimsView{s: s} }

// WithClaimsView makes the store's ListClaims read through a ClaimsView the store keeps: for a warm
// function's store, whose later invocations then query only the shards that changed. The store's own
// claim writes are applied to that view as they commit, so they make it query nothing (see
// claimsviewown.go).
func WithClaimsView() Option { return func(s *Store) { s.view = &ClaimsView{s: s} } }

// ListClaims returns every live claim, by name, as Store.ListClaims does, querying only the shards that
// changed since the view last read them.
func (v *ClaimsView) ListClaims(ctx context.Context) ([]Claim, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.ownWrites.Lock()
	defer v.ownWrites.Unlock()
	v.applyOwnWrites()
	legacyUnits, err := v.s.migrateLegacyClaims(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing claims: %w", err)
	}
	counters, units, err := v.s.shardCounters(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing claims: %w", err)
	}
	read := ClaimsRead{ReadUnits: legacyUnits + units}
	var stale []int
	for k := range v.kept {
		if !v.kept[k].read || v.kept[k].changes != counters[k] {
			stale = append(stale, k)
		}
	}
	fresh := make([]keptShard, len(stale))
	shardUnits := make([]float64, len(stale))
	g, gctx := errgroup.WithContext(ctx)
	for i, k := range stale {
		g.Go(func() error {
			items, units, err := v.s.queryItems(gctx, v.s.partition(livePartition(k), ""))
			fresh[i], shardUnits[i] = keptShard{read: true, changes: counters[k], items: items}, units
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, fmt.Errorf("listing claims: %w", err)
	}
	for i, k := range stale {
		v.kept[k] = fresh[i]
		read.ReadUnits += shardUnits[i]
		read.ItemsRead += len(fresh[i].items)
	}
	read.ShardsQueried = len(stale)
	v.last = read

	var all []Claim
	for k := range v.kept {
		claims := make([]Claim, 0, len(v.kept[k].items))
		if err := attributevalue.UnmarshalListOfMaps(v.kept[k].items, &claims); err != nil {
			return nil, fmt.Errorf("listing claims: decoding shard %d: %w", k, err)
		}
		all = append(all, claims...)
	}
	return sortClaims(all), nil
}

// LastRead describes the view's last successful read.
func (v *ClaimsView) LastRead() ClaimsRead {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.last
}

// shardCounters reads every shard's change counter (strongly consistent, one BatchGetItem, again for
// keys DynamoDB leaves unprocessed): the counter's value, "" for a shard never written.
func (s *Store) shardCounters(ctx context.Context) ([ClaimShards]string, float64, error) {
	var counters [ClaimShards]string
	keys := make([]map[string]types.AttributeValue, ClaimShards)
	for k := range keys {
		keys[k] = counterKey(k)
	}
	units := 0.0
	for attempt := 0; len(keys) > 0; attempt++ {
		if attempt == unprocessedRetries+1 {
			return counters, units, fmt.Errorf("reading the claim shard counters: %d keys left unprocessed", len(keys))
		}
		out, err := s.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
			s.table: {Keys: keys, ConsistentRead: aws.Bool(true)},
		}})
		if err != nil {
			return counters, units, fmt.Errorf("reading the claim shard counters: %w", err)
		}
		for _, item := range out.Responses[s.table] {
			k, err := counterShard(item)
			if err != nil {
				return counters, units, err
			}
			if n, ok := item[attrChanges].(*types.AttributeValueMemberN); ok {
				counters[k] = n.Value
			}
		}
		units += float64(len(keys)) // a strongly consistent read of an item under 4 KB, or of none, is a unit
		keys = out.UnprocessedKeys[s.table].Keys
	}
	return counters, units, nil
}

// counterShard is the shard of a counter item.
func counterShard(item map[string]types.AttributeValue) (int, error) {
	sk, ok := item[SortKey].(*types.AttributeValueMemberS)
	var k int
	if ok {
		_, err := fmt.Sscanf(sk.Value, "%d", &k)
		ok = err == nil && k >= 0 && k < ClaimShards
	}
	if !ok {
		return 0, fmt.Errorf("claim shard counter with an unexpected key %v", item[SortKey])
	}
	return k, nil
}
