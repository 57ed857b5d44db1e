package state

import (
	"fmt"
	"hash/fnv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// ClaimShards is how many partition keys the claims are spread over. A claim's shard is a stable hash of
// its name, so a claim is read and written by key without knowing anything but its name, and the writes of
// a mass replacement land on ClaimShards keys instead of one.
const ClaimShards = 16

// Partition-key prefixes of claim items: live claims (every lifecycle but deleted), deleted claims (kept
// DeletedClaimRetention for explain and audits, never read by the live paths), and the per-shard change
// counters (one item per shard under claimCounterPartition, sort key the shard).
const (
	liveClaimPrefix       = "CLAIM#"
	goneClaimPrefix       = "CLAIMGONE#"
	claimCounterPartition = "CLAIMSHARD"
	attrChanges           = "changes"
)

// claimShard is the shard of the claim name.
func claimShard(name string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(name)) // a hash.Hash never fails to write
	return int(h.Sum32() % ClaimShards)
}

func shardName(k int) string { return fmt.Sprintf("%02d", k) }

func livePartition(k int) string { return liveClaimPrefix + shardName(k) }

func gonePartition(k int) string { return goneClaimPrefix + shardName(k) }

// claimPK is the partition key of the claim name's item: its live shard, or its deleted one.
func claimPK(name string, deleted bool) string {
	if deleted {
		return gonePartition(claimShard(name))
	}
	return livePartition(claimShard(name))
}

// counterKey is the key of shard k's change counter.
func counterKey(k int) map[string]types.AttributeValue {
	return key(claimCounterPartition, shardName(k))
}
