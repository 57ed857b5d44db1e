package provisioning

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// fakeBatchEC2 launches from a stock of instances per offering: a batch takes what the first offering
// with stock has (up to the claims asked for) and reports the offerings it found empty.
type fakeBatchEC2 struct {
	fakeEC2Capacity
	mu          sync.Mutex
	stock       map[instance.Offering]int
	next        int
	calls       []instance.BatchRequest
	delay       time.Duration
	inFlight    int
	maxInFlight int
	err         error
}

func (f *fakeBatchEC2) LaunchBatch(_ context.Context, req instance.BatchRequest) (instance.BatchResult, error) {
	f.mu.Lock()
	f.calls = append(f.calls, req)
	f.inFlight++
	f.maxInFlight = max(f.maxInFlight, f.inFlight)
	f.mu.Unlock()
	time.Sleep(f.delay)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.inFlight--
	if f.err != nil {
		return instance.BatchResult{}, f.err
	}
	ice := &instance.InsufficientCapacityError{Codes: []string{"InsufficientInstanceCapacity"}}
	for _, o := range req.Overrides {
		off := instance.Offering{InstanceType: o.InstanceType, Zone: o.Zone, CapacityType: req.CapacityType}
		n := min(f.stock[off], len(req.Claims))
		if n == 0 {
			ice.Offerings = append(ice.Offerings, off)
			continue
		}
		f.stock[off] -= n
		res := instance.BatchResult{Unassigned: req.Claims[n:]}
		for _, c := range req.Claims[:n] {
			f.next++
			res.Assigned = append(res.Assigned, instance.Assignment{Claim: c, Instance: instance.Instance{
				ID: fmt.Sprintf("i-%04d", f.next), InstanceType: o.InstanceType, Zone: o.Zone, CapacityType: req.CapacityType}})
		}
		if n < len(req.Claims) {
			ice.Offerings = append(ice.Offerings, off)
			res.Partial = ice
		}
		return res, nil
	}
	return instance.BatchResult{}, ice
}

func TestGroupClaimsBatchesIdenticalLaunchesInOrder(t *testing.T) {
	zone := func(z string) []scheduling.NodeSelectorRequirement {
		return []scheduling.NodeSelectorRequirement{{Key: corev1.LabelTopologyZone, Operator: "In", Values: []string{z}}}
	}
	claim := func(name, pool, z string, options ...string) scheduling.ClaimPlan {
		return scheduling.ClaimPlan{Name: name, NodePool: pool, Requirements: zone(z), InstanceTypeOptions: options}
	}
	claims := []scheduling.ClaimPlan{
		claim("a1", "a", "us-east-1a", "m5.large"), claim("b1", "b", "us-east-1a", "m5.large"),
		claim("a2", "a", "us-east-1a", "m5.large"), claim("a3", "a", "us-east-1b", "m5.large"),
		claim("a4", "a", "us-east-1a", "m5.large", "c5.large"), claim("a5", "a", "us-east-1a", "m5.large"),
		claim("a6", "a", "us-east-1a", "m5.large"),
	}
	reserved := claim("r1", "a", "us-east-1a", "m5.large")
	reserved.ReservationID = "cr-1"
	relaxed := claim("x1", "a", "us-east-1a", "m5.large")
	relaxed.MinValuesRelaxed = true // launches without the fleet context
	claims = append(claims, reserved, relaxed)
	names := func(groups [][]scheduling.ClaimPlan) [][]string {
		var out [][]string
		for _, g := range groups {
			var n []string
			for _, cp := range g {
				n = append(n, cp.Name)
			}
			out = append(out, n)
		}
		return out
	}
	assert.Equal(t, [][]string{{"a1", "a2", "a5"}, {"a6"}, {"b1"}, {"a3"}, {"a4"}, {"r1"}, {"x1"}}, names(groupClaims(claims, 3)),
		"only the same pool, requirements, options, reservation and relaxed minValues share a batch; a batch holds at most 3")
	assert.Len(t, groupClaims(claims, 0), len(claims), "a bound below one launches each claim alone")
}

func TestBatchPlanFallsBackForTheClaimsLeftWithoutInstances(t *testing.T) {
	ctx := context.Background()
	s := newStateStore(t)
	cheap := instance.Offering{InstanceType: "c5.large", Zone: "us-east-1a", CapacityType: "spot"}
	next := instance.Offering{InstanceType: "m5.large", Zone: "us-east-1a", CapacityType: "spot"}
	f := &fakeBatchEC2{stock: map[instance.Offering]int{cheap: 3, next: 10}}
	claims := []string{"c1", "c2", "c3", "c4", "c5"}
	out := LaunchBatchPlan(ctx, f, s, plan(), "batch-x", claims)
	require.NoError(t, out.Err)
	assert.Empty(t, out.Rest)
	require.Len(t, out.Assigned, 5)
	seen := map[string]bool{}
	for _, a := range out.Assigned {
		assert.False(t, seen[a.Instance.ID], "every claim has its own instance")
		seen[a.Instance.ID] = true
	}
	require.Len(t, f.calls, 2)
	assert.Equal(t, claims, f.calls[0].Claims)
	assert.Equal(t, "", f.calls[0].ClientToken, "the first call's token is the batch id")
	assert.Equal(t, []string{"c4", "c5"}, f.calls[1].Claims, "only the claims left go again")
	assert.Equal(t, attemptToken("batch-x", 1), f.calls[1].ClientToken)
	assert.Contains(t, out.Unavailable, cheap, "the offering that ran short is recorded")
	unavailable, err := s.UnavailableOfferings(ctx)
	require.NoError(t, err)
	assert.Len(t, unavailable, 1)
}

func TestBatchPlanWithNoCapacityLeavesEveryClaimWithTheAnswer(t *testing.T) {
	f := &fakeBatchEC2{stock: map[instance.Offering]int{}}
	out := LaunchBatchPlan(context.Background(), f, newStateStore(t), plan(), "batch-x", []string{"c1", "c2"})
	assert.ErrorIs(t, out.Err, ErrNoCapacity)
	assert.Equal(t, []string{"c1", "c2"}, out.Rest)
	assert.Empty(t, out.Assigned)
}

func TestBatchPlanStopsAtAnAnswerAboutTheRequest(t *testing.T) {
	f := &fakeBatchEC2{err: &instance.LaunchError{Kind: instance.KindUnauthorized, Code: "UnauthorizedOperation"}}
	out := LaunchBatchPlan(context.Background(), f, newStateStore(t), plan(), "batch-x", []string{"c1", "c2"})
	var le *instance.LaunchError
	require.ErrorAs(t, out.Err, &le)
	assert.Len(t, f.calls, 1, "no fallback for an error that names no offering")
	assert.Equal(t, []string{"c1", "c2"}, out.Rest)
}

// bigPod requests three CPUs: one per m5.xlarge.
func bigPod(name string) corev1.Pod {
	p := pod(name, nil)
	p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("3")
	return p
}

func batchWorld(t *testing.T, pods int) (testWorld, *fakeBatchEC2) {
	var ps []corev1.Pod
	for i := range pods {
		ps = append(ps, bigPod(fmt.Sprintf("p%02d", i)))
	}
	w := newTestProvisioner(t, fakeCluster{snap: pendingSnapshot(ps...)})
	f := &fakeBatchEC2{stock: map[instance.Offering]int{{InstanceType: "m5.xlarge", Zone: "us-east-1a", CapacityType: "spot"}: 1000}}
	w.p.deps.Launcher = f
	return w, f
}

func TestRunLaunchesIdenticalClaimsAsOneBatch(t *testing.T) {
	ctx := context.Background()
	w, f := batchWorld(t, 5)
	rep, err := w.p.Run(ctx, "run-1")
	require.NoError(t, err)
	assert.Empty(t, rep.Errors)
	require.Len(t, rep.Claims, 5)
	require.Len(t, f.calls, 1, "five identical claims, one CreateFleet")
	assert.Len(t, f.calls[0].Claims, 5)
	claims, err := w.store.ListClaims(ctx)
	require.NoError(t, err)
	require.Len(t, claims, 5)
	instances := map[string]bool{}
	for _, c := range claims {
		assert.Equal(t, f.calls[0].Batch, c.Batch, "every claim records the batch id")
		assert.Equal(t, state.Launched, c.Lifecycle)
		assert.False(t, instances[c.InstanceID], "no instance serves two claims")
		instances[c.InstanceID] = true
	}
	assert.Len(t, f.requests, 0, "nothing went through the single-claim path")
}

func TestRunReleasesTheClaimsABatchCouldNotLaunch(t *testing.T) {
	ctx := context.Background()
	w, f := batchWorld(t, 4)
	f.stock = map[instance.Offering]int{{InstanceType: "m5.xlarge", Zone: "us-east-1a", CapacityType: "spot"}: 3}
	rep, err := w.p.Run(ctx, "run-1")
	require.NoError(t, err)
	assert.Len(t, rep.Claims, 3)
	require.Len(t, rep.LaunchFailures, 1)
	assert.Equal(t, "InsufficientCapacity", rep.LaunchFailures[0].Reason)
	claims, err := w.store.ListAllClaims(ctx)
	require.NoError(t, err)
	lifecycles := map[state.Lifecycle]int{}
	for _, c := range claims {
		lifecycles[c.Lifecycle]++
	}
	assert.Equal(t, map[state.Lifecycle]int{state.Launched: 3, state.Deleted: 1}, lifecycles)
}

// TestABatchIsNoLargerThanOneClaimTransaction: more identical claims than one state transaction records
// are launched in several batches, each recorded whole before its CreateFleet.
func TestABatchIsNoLargerThanOneClaimTransaction(t *testing.T) {
	ctx := context.Background()
	w, f := batchWorld(t, state.MaxClaimsPerWrite+5)
	rep, err := w.p.Run(ctx, "run-1")
	require.NoError(t, err)
	assert.Empty(t, rep.Errors)
	assert.Len(t, rep.Claims, state.MaxClaimsPerWrite+5)
	var sizes []int
	for _, c := range f.calls {
		sizes = append(sizes, len(c.Claims))
	}
	assert.ElementsMatch(t, []int{state.MaxClaimsPerWrite, 5}, sizes)
	claims, err := w.store.ListClaims(ctx)
	require.NoError(t, err)
	assert.Len(t, claims, state.MaxClaimsPerWrite+5)
}

func TestRunBoundsConcurrentBatches(t *testing.T) {
	old := batchSize
	batchSize = 2
	t.Cleanup(func() { batchSize = old })
	w, f := batchWorld(t, 40)
	f.delay = 50 * time.Millisecond
	rep, err := w.p.Run(context.Background(), "run-1")
	require.NoError(t, err)
	assert.Len(t, rep.Claims, 40)
	assert.Len(t, f.calls, 20)
	assert.LessOrEqual(t, f.maxInFlight, MaxConcurrentLaunches)
	assert.Greater(t, f.maxInFlight, 1, "batches go out concurrently")
}

func TestRunWritesNothingForBatchesNotStartedBeforeTheDeadline(t *testing.T) {
	w, f := batchWorld(t, 6)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // inside LaunchMargin
	defer cancel()
	rep, err := w.p.Run(ctx, "run-1")
	require.NoError(t, err)
	assert.Empty(t, rep.Claims)
	assert.Len(t, rep.Skipped, 6)
	assert.Empty(t, f.calls)
	claims, err := w.store.ListClaims(ctx)
	require.NoError(t, err)
	assert.Empty(t, claims, "a batch that does not start is not half-recorded: nothing is written")
}
