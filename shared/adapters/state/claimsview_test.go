package state

import (
	"context"
	"flag"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeBetween runs write once, after the next BatchGetItem (the view's read of the shard counters) and
// before the queries that follow it: a claim write that lands in the middle of a view's read.
type writeBetween struct {
	DynamoDB
	write func()
	armed atomic.Bool
}

func (w *writeBetween) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	out, err := w.DynamoDB.BatchGetItem(ctx, in, optFns...)
	if err == nil && w.write != nil && w.armed.CompareAndSwap(true, false) {
		w.write()
	}
	return out, err
}

func TestClaimsViewAnswersAsAWholeReadAcrossInterleavedWrites(t *testing.T) {
	ctx := context.Background()
	s, clk := newStore(t)
	db := &writeBetween{DynamoDB: s.db}
	view := New(db, s.table, WithClock(clk.Now)).NewClaimsView()
	same := func(msg string) ClaimsRead {
		t.Helper()
		got, err := view.ListClaims(ctx)
		require.NoError(t, err, msg)
		want, err := s.ListClaims(ctx)
		require.NoError(t, err, msg)
		assert.Equal(t, want, got, msg)
		return view.LastRead()
	}

	assert.Equal(t, ClaimShards, same("an empty table, cold").ShardsQueried)
	created, err := s.CreateClaims(ctx, claimsNamed(MaxClaimsPerWrite, "c"))
	require.NoError(t, err)
	assert.Equal(t, ClaimShards, same("a batch created over every shard").ShardsQueried, "40 names spread over the 16 shards")
	assert.Zero(t, same("nothing changed").ShardsQueried)

	_, err = s.UpdateClaim(ctx, "c-007", func(c *Claim) error { c.Lifecycle, c.InstanceID = Launched, "i-7"; return nil })
	require.NoError(t, err)
	assert.Equal(t, 1, same("one claim launched").ShardsQueried)

	for _, l := range []Lifecycle{Terminating, Deleted} {
		_, err = s.UpdateClaim(ctx, "c-007", func(c *Claim) error { c.Lifecycle = l; return nil })
		require.NoError(t, err)
		assert.Equal(t, 1, same("moved to "+string(l)).ShardsQueried)
	}
	got, err := view.ListClaims(ctx)
	require.NoError(t, err)
	assert.Len(t, got, MaxClaimsPerWrite-1, "the deleted claim left the live claims")

	// Writes that land between the view's read of the counters and its queries: this read may or may
	// not see them, the next one must.
	for i, write := range []func(){
		func() { _, err := s.CreateClaim(ctx, Claim{Name: "late-1", NodePool: "p"}); require.NoError(t, err) },
		func() {
			_, err := s.UpdateClaim(ctx, "c-011", func(c *Claim) error { c.Zone = "us-east-1c"; return nil })
			require.NoError(t, err)
		},
		func() {
			_, err := s.UpdateClaim(ctx, "c-012", func(c *Claim) error { c.Lifecycle = Deleted; return nil })
			require.NoError(t, err)
		},
		func() {
			next := append([]Claim(nil), created[20:30]...)
			for j := range next {
				next[j].Lifecycle = Launched
			}
			_, err := s.PutClaims(ctx, created[20:30], next)
			require.NoError(t, err)
		},
	} {
		db.write = write
		db.armed.Store(true)
		_, err := view.ListClaims(ctx)
		require.NoError(t, err)
		require.False(t, db.armed.Load(), "write %d ran inside the read", i)
		same(fmt.Sprintf("the read after write %d", i))
		assert.Zero(t, same(fmt.Sprintf("nothing changed after write %d", i)).ShardsQueried)
	}

	// A claim the caller changes is the caller's copy.
	got, err = view.ListClaims(ctx)
	require.NoError(t, err)
	got[0].Labels["mutated"] = "yes"
	got[0].Name = "renamed"
	same("a caller's changes do not reach the view")
}

func TestAStoreWithAClaimsViewListsWhatAWholeReadLists(t *testing.T) {
	ctx := context.Background()
	plain, clk := newStore(t)
	warm := New(plain.db, plain.table, WithClock(clk.Now), WithClaimsView())
	_, err := plain.CreateClaims(ctx, claimsNamed(5, "w"))
	require.NoError(t, err)
	for i := 0; i < 3; i++ {
		got, err := warm.ListClaims(ctx)
		require.NoError(t, err)
		want, err := plain.ListClaims(ctx)
		require.NoError(t, err)
		assert.Equal(t, want, got)
		_, err = plain.CreateClaim(ctx, Claim{Name: fmt.Sprintf("x-%d", i), NodePool: "p"})
		require.NoError(t, err)
	}
	assert.Equal(t, 1, warm.view.LastRead().ShardsQueried, "the last read queried the one shard written since")
}

// realisticClaim is a claim the size of an initialized claim in a production cluster: every label
// Karpenter puts on a NodeClaim, the requests packed, the instance-type options handed to the launch and
// everything the launch and registration recorded.
func realisticClaim(i int, at time.Time) Claim {
	name := fmt.Sprintf("general-purpose-%05d", i)
	types := make([]string, 20)
	for j := range types {
		types[j] = fmt.Sprintf("m%dg.%dxlarge", 5+j%3, 1+j)
	}
	tgp := 2 * time.Hour
	return Claim{Name: name, NodePool: "general-purpose", NodeClass: "default", Lifecycle: Initialized, Version: 4,
		TemplateHash: "9211749352914862134", NodeClassHash: "13382940584627490582", TemplateHashVersion: "v3",
		NodeClassHashVersion: "v4", ExpireAfter: "720h0m0s", TerminationGracePeriod: &tgp,
		Requests:      map[string]string{"cpu": "7350m", "memory": "27136Mi", "pods": "31", "ephemeral-storage": "12Gi"},
		InstanceTypes: types,
		Labels: map[string]string{"karpenter.sh/nodepool": "general-purpose", "karpenter.k8s.aws/ec2nodeclass": "default",
			"karpenter.sh/capacity-type": "spot", "node.kubernetes.io/instance-type": "m7g.2xlarge",
			"topology.kubernetes.io/zone": "us-east-1a", "topology.k8s.aws/zone-id": "use1-az1", "kubernetes.io/arch": "arm64",
			"kubernetes.io/os": "linux", "karpenter.k8s.aws/instance-category": "m", "karpenter.k8s.aws/instance-family": "m7g",
			"karpenter.k8s.aws/instance-generation": "7", "karpenter.k8s.aws/instance-size": "2xlarge",
			"karpenter.k8s.aws/instance-cpu": "8", "karpenter.k8s.aws/instance-memory": "32768",
			"karpenter.k8s.aws/instance-hypervisor": "nitro", "karpenter.k8s.aws/instance-network-bandwidth": "3750",
			"team": "payments", "workload-class": "stateless"},
		InstanceID: fmt.Sprintf("i-0%016x", i), InstanceType: "m7g.2xlarge", Zone: "us-east-1a", CapacityType: "spot",
		PricePerHour: 0.1432, ProviderID: fmt.Sprintf("aws:///us-east-1a/i-0%016x", i), ImageID: "ami-0123456789abcdef0",
		SubnetID: "subnet-0123456789abcdef0", SecurityGroupIDs: []string{"sg-0123456789abcdef0", "sg-0fedcba9876543210"},
		NodeName:  fmt.Sprintf("ip-10-%d-%d-%d.ec2.internal", i/65536, i/256%256, i%256),
		CreatedAt: at, LaunchedAt: &at, RegisteredAt: &at, InitializedAt: &at, WriteID: newWriteID()}
}

// seedClaims writes n realistic live claims and their shard counters straight into the table (moto's
// transactions copy the whole table once per action, far too slow to write thousands of claims with).
func seedClaims(t *testing.T, s *Store, n int) {
	t.Helper()
	ctx := context.Background()
	var writes []types.WriteRequest
	perShard := map[int]int64{}
	for i := 0; i < n; i++ {
		c := realisticClaim(i, s.now())
		item, err := marshalItem(claimPK(c.Name, false), c.Name, c)
		require.NoError(t, err)
		writes = append(writes, types.WriteRequest{PutRequest: &types.PutRequest{Item: item}})
		perShard[claimShard(c.Name)]++
	}
	for k, changes := range perShard {
		item := counterKey(k)
		item[attrChanges] = num(changes)
		writes = append(writes, types.WriteRequest{PutRequest: &types.PutRequest{Item: item}})
	}
	for len(writes) > 0 {
		m := min(len(writes), batchWriteLimit)
		require.NoError(t, s.writeBatch(ctx, writes[:m]))
		writes = writes[m:]
	}
}

// viewClaims is how many claims TestAWarmClaimsViewCostsAFractionOfAWholeRead stores: 500 by default
// (moto takes minutes to answer the reads of 5,000); -view-claims=5000 measures the size.
var viewClaims = flag.Int("view-claims", 500, "claims stored by TestAWarmClaimsViewCostsAFractionOfAWholeRead")

// TestAWarmClaimsViewCostsAFractionOfAWholeRead: at thousands of claims, a read of a view when nothing changed
// costs at most 10% of the read units of a whole read, and one where a claim changed re-reads its shard.
func TestAWarmClaimsViewCostsAFractionOfAWholeRead(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	claims := *viewClaims
	seedClaims(t, s, claims)
	view := s.NewClaimsView()

	cold, err := view.ListClaims(ctx)
	require.NoError(t, err)
	require.Len(t, cold, claims)
	whole := view.LastRead()
	assert.Equal(t, ClaimShards, whole.ShardsQueried)
	assert.Equal(t, claims, whole.ItemsRead)

	steady, err := view.ListClaims(ctx)
	require.NoError(t, err)
	assert.Equal(t, cold, steady)
	idle := view.LastRead()
	assert.Zero(t, idle.ShardsQueried)
	wholeUnits := whole.ReadUnits - idle.ReadUnits // the shards' queries alone: what a whole read costs beyond the view's own reads
	assert.LessOrEqual(t, idle.ReadUnits, wholeUnits/10, "nothing changed: at most 10% of a whole read")

	_, err = s.UpdateClaim(ctx, "general-purpose-00042", func(c *Claim) error { c.Lifecycle = Draining; return nil })
	require.NoError(t, err)
	afterOne, err := view.ListClaims(ctx)
	require.NoError(t, err)
	want, err := s.ListClaims(ctx)
	require.NoError(t, err)
	assert.Equal(t, want, afterOne)
	one := view.LastRead()
	assert.Equal(t, 1, one.ShardsQueried)

	size, err := marshalItem("x", "y", realisticClaim(0, s.now()))
	require.NoError(t, err)
	t.Logf("%d claims of %d bytes: whole read %.0f read units; warm view, nothing changed: %.0f (%.2f%%); one claim changed: %.0f (%.2f%%, %d items)",
		claims, ItemSize(size), wholeUnits, idle.ReadUnits, 100*idle.ReadUnits/wholeUnits, one.ReadUnits, 100*one.ReadUnits/wholeUnits, one.ItemsRead)
}
