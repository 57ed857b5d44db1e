package e2e

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	awsmw "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/smithy-go/middleware"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/flows/lifecycle"
)

// claimReads counts, of the calls through a configuration, the reads of claims: queries of the claim
// partitions (the whole list, shard by shard), queries of an index, GetItems of a claim, reads of the
// claim shard counters (BatchGetItem), and tag-filtered instance lists.
type claimReads struct {
	mu                                        sync.Mutex
	shardQueries, indexQueries, gets, batches int
	instanceLists                             int
}

func (c *claimReads) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.shardQueries, c.indexQueries, c.gets, c.batches, c.instanceLists = 0, 0, 0, 0, 0
}

func (c *claimReads) count(in any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	isClaim := func(v ddbtypes.AttributeValue) bool {
		s, ok := v.(*ddbtypes.AttributeValueMemberS)
		return ok && strings.HasPrefix(s.Value, "CLAIM")
	}
	switch in := in.(type) {
	case *dynamodb.QueryInput:
		if in.IndexName != nil {
			c.indexQueries++
			return
		}
		for _, v := range in.ExpressionAttributeValues {
			if isClaim(v) {
				c.shardQueries++
			}
		}
	case *dynamodb.GetItemInput:
		for _, v := range in.Key {
			if isClaim(v) {
				c.gets++
			}
		}
	case *dynamodb.BatchGetItemInput:
		c.batches++
	case *ec2.DescribeInstancesInput:
		if len(in.Filters) > 0 {
			c.instanceLists++
		}
	}
}

// TestAPassBetweenSweepsReadsTheJoiningClaimsFromTheIndex, on moto and the real API server, with the
// function's sweep interval: after a sweep, a burst of 10 Nodes joins; the next pass lists no instances
// and reads no claim shard, only the byLifecycle index (pending, launched, registered), and reads each
// claim by key once, before lifting its unregistered taint; the pass after it initializes them all
// without reading any claim by key (each is moved from the version the index listed).
func TestAPassBetweenSweepsReadsTheJoiningClaimsFromTheIndex(t *testing.T) {
	const n = 10
	e := newEnv(t)
	reads := &claimReads{}
	cfg := e.cfg.Copy()
	cfg.APIOptions = append(cfg.APIOptions, func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("countClaimReads",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				if awsmw.GetOperationName(ctx) != "" {
					reads.count(in.Parameters)
				}
				return next.HandleInitialize(ctx, in)
			}), middleware.After)
	})
	client := e.fnKube
	r := lifecycle.NewRunner(lifecycle.RunnerConfig{SweepEvery: lifecycle.DefaultSweepEvery}, lifecycle.RunnerDeps{
		Store: state.New(state.NewClient(cfg), "state", state.WithClock(e.clock.Now), state.WithClaimsView()),
		Nodes: kube.NewNodeView(client, kube.SnapshotOptions{}), NodeActions: kube.NewActions(client),
		Instances: instance.New(ec2.NewFromConfig(cfg), cluster), Events: kube.NewRecorder(client, kube.RecorderOptions{Now: e.clock.Now}),
		Prices: e.prices, Now: e.clock.Now})
	ctx := context.Background()

	_, err := r.Run(ctx, "sweep")
	require.NoError(t, err)
	assert.Equal(t, 1, reads.instanceLists, "the first pass sweeps")
	assert.GreaterOrEqual(t, reads.shardQueries, state.ClaimShards, "a cold view reads every shard (and the legacy partition)")

	claims, nodes := e.burst(t, "default-joins", n)
	reads.reset()
	e.clock.set(10 * time.Second)
	rep, err := r.Run(ctx, "register")
	require.NoError(t, err)
	require.Empty(t, rep.Errors)
	assert.Equal(t, n, rep.Registered, rep.String())
	assert.Zero(t, reads.instanceLists, "no instance list between sweeps")
	assert.Zero(t, reads.shardQueries, "no claim shard is read between sweeps")
	assert.Zero(t, reads.batches, "nor the shard counters")
	assert.Equal(t, 3, reads.indexQueries, "pending, launched and registered claims, from the index")
	assert.Equal(t, n, reads.gets, "each claim read once by key, before its taint is lifted")
	for i := range n {
		assert.Equal(t, state.Registered, e.claim(t, claims[i]).Lifecycle)
		assert.NotContains(t, taintKeys(e.node(t, nodes[i])), lifecycle.UnregisteredTaintKey+"=:NoExecute")
	}

	reads.reset()
	e.clock.set(20 * time.Second)
	rep, err = r.Run(ctx, "initialize")
	require.NoError(t, err)
	require.Empty(t, rep.Errors)
	assert.Equal(t, n, rep.Initialized, rep.String())
	assert.Zero(t, reads.shardQueries+reads.instanceLists)
	assert.Equal(t, 3, reads.indexQueries)
	assert.Zero(t, reads.gets, "each claim moved from the version the index listed")
	for i := range n {
		assert.Equal(t, state.Initialized, e.claim(t, claims[i]).Lifecycle)
	}
}
