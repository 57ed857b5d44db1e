package mirror

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
)

// followAPI is a stand-in for the NodeClaim mirrors as a Follower meets them: whole objects with
// revisions, updates checked against the revision they carry, and a count of every request.
type followAPI struct {
	mu      sync.Mutex
	rev     int
	objects map[string]*unstructured.Unstructured
	// conflicts answers that many status updates with 409 (someone wrote in between); stall makes every
	// request wait for the context; fail fails every update.
	conflicts int
	stall     bool
	fail      error

	gets, updates, statusUpdates, applies, statusApplies int
}

func newFollowAPI() *followAPI { return &followAPI{objects: map[string]*unstructured.Unstructured{}} }

func (f *followAPI) writes() int { return f.updates + f.statusUpdates + f.applies + f.statusApplies }

func (f *followAPI) wait(ctx context.Context) error {
	if f.stall {
		<-ctx.Done()
		return ctx.Err()
	}
	return nil
}

func (f *followAPI) Get(ctx context.Context, name string) (*unstructured.Unstructured, error) {
	if err := f.wait(ctx); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gets++
	o, ok := f.objects[name]
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{Group: Group, Resource: NodeClaims.Plural}, name)
	}
	return o.DeepCopy(), nil
}

func (f *followAPI) bump(o *unstructured.Unstructured) string {
	f.rev++
	o.SetResourceVersion(strconv.Itoa(f.rev))
	return o.GetResourceVersion()
}

func (f *followAPI) check(obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if f.fail != nil {
		return nil, f.fail
	}
	cur, ok := f.objects[obj.GetName()]
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{Group: Group, Resource: NodeClaims.Plural}, obj.GetName())
	}
	if obj.GetResourceVersion() != cur.GetResourceVersion() {
		return nil, apierrors.NewConflict(schema.GroupResource{Group: Group, Resource: NodeClaims.Plural}, obj.GetName(), errors.New("changed"))
	}
	return cur, nil
}

func (f *followAPI) Update(ctx context.Context, obj *unstructured.Unstructured) (string, error) {
	if err := f.wait(ctx); err != nil {
		return "", err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.updates++
	cur, err := f.check(obj)
	if err != nil {
		return "", err
	}
	next := obj.DeepCopy()
	next.Object["status"] = cur.Object["status"]
	f.objects[obj.GetName()] = next
	return f.bump(next), nil
}

func (f *followAPI) UpdateStatus(ctx context.Context, obj *unstructured.Unstructured) (string, error) {
	if err := f.wait(ctx); err != nil {
		return "", err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.statusUpdates++
	if f.conflicts > 0 {
		f.conflicts--
		cur := f.objects[obj.GetName()]
		f.bump(cur) // someone else wrote it in between
		return "", apierrors.NewConflict(schema.GroupResource{Group: Group, Resource: NodeClaims.Plural}, obj.GetName(), errors.New("changed"))
	}
	cur, err := f.check(obj)
	if err != nil {
		return "", err
	}
	cur.Object["status"] = obj.Object["status"]
	return f.bump(cur), nil
}

func (f *followAPI) Apply(ctx context.Context, obj *unstructured.Unstructured) (string, error) {
	if err := f.wait(ctx); err != nil {
		return "", err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.applies++
	cur, ok := f.objects[obj.GetName()]
	if !ok {
		cur = &unstructured.Unstructured{Object: map[string]any{"apiVersion": APIVersion, "kind": NodeClaims.Kind, "metadata": map[string]any{"name": obj.GetName()}}}
		f.objects[obj.GetName()] = cur
	}
	cur.SetLabels(obj.GetLabels())
	cur.SetAnnotations(obj.GetAnnotations())
	cur.SetFinalizers(obj.GetFinalizers())
	cur.Object["spec"] = obj.Object["spec"]
	return f.bump(cur), nil
}

func (f *followAPI) ApplyStatus(ctx context.Context, obj *unstructured.Unstructured) (string, error) {
	if err := f.wait(ctx); err != nil {
		return "", err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.statusApplies++
	cur := f.objects[obj.GetName()]
	cur.Object["status"] = obj.Object["status"]
	return f.bump(cur), nil
}

// conditionOf is the mirror's condition of type typ (nil when it has none).
func (f *followAPI) conditionOf(t *testing.T, name, typ string) map[string]any {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	o, ok := f.objects[name]
	require.True(t, ok, "no mirror of %s", name)
	conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
	for _, c := range conds {
		if m := c.(map[string]any); m["type"] == typ {
			return m
		}
	}
	return nil
}

func followedClaim(name string, version int64) state.Claim {
	at := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	return state.Claim{Name: name, NodePool: "default", NodeClass: "default", Lifecycle: state.Initialized, Version: version,
		InstanceID: "i-0" + name, ProviderID: "aws:///us-east-1a/i-0" + name, InstanceType: "m5.large", Zone: "us-east-1a",
		CapacityType: "on-demand", NodeName: "ip-" + name, CreatedAt: at, LaunchedAt: &at, RegisteredAt: &at, InitializedAt: &at}
}

func asCandidate(c state.Claim) state.Claim {
	c.Version++
	c.Disrupting = &state.DisruptingMark{Command: "run-1-1", Reason: "Underutilized", Since: time.Date(2026, 12, 2, 11, 0, 0, 0, time.UTC),
		Replacements: []string{"default-r3pl4"}}
	return c
}

func TestFollowerCreatesAMissingMirrorAndThenWritesOnlyChanges(t *testing.T) {
	api := newFollowAPI()
	f := NewFollower(api, FollowOptions{}, nil)
	ctx := context.Background()
	c := followedClaim("a", 3)

	rep := f.Follow(ctx, []state.Claim{c})
	assert.Equal(t, FollowReport{Written: 1}, rep)
	assert.Equal(t, []string{Finalizer}, api.objects["a"].GetFinalizers())
	assert.Equal(t, "3", api.objects["a"].GetAnnotations()[ClaimVersionAnnotation])
	assert.Nil(t, api.conditionOf(t, "a", apis.ConditionTypeDisruptionReason))

	// The same record again: one GET, no write.
	before := api.writes()
	rep = f.Follow(ctx, []state.Claim{c})
	assert.Equal(t, FollowReport{Unchanged: 1}, rep)
	assert.Equal(t, before, api.writes(), "an unchanged claim writes nothing")

	// The claim becomes a command's candidate: its status and object are written over the revision read.
	d := asCandidate(c)
	rep = f.Follow(ctx, []state.Claim{d})
	assert.Equal(t, FollowReport{Written: 1}, rep)
	cond := api.conditionOf(t, "a", apis.ConditionTypeDisruptionReason)
	require.NotNil(t, cond)
	assert.Equal(t, "Underutilized", cond["reason"])
	assert.Contains(t, cond["message"], "default-r3pl4")
	assert.Equal(t, "4", api.objects["a"].GetAnnotations()[ClaimVersionAnnotation])
	assert.Equal(t, []string{Finalizer}, api.objects["a"].GetFinalizers(), "the finalizer is kept")
}

func TestFollowerNeverWritesAnOlderRecordOverANewerOne(t *testing.T) {
	api := newFollowAPI()
	f := NewFollower(api, FollowOptions{}, nil)
	ctx := context.Background()
	c := followedClaim("a", 3)
	d := asCandidate(c)
	require.Equal(t, 1, f.Follow(ctx, []state.Claim{d}).Written)

	// A writer holding the record from before the command (version 3) comes late: the mirror keeps
	// showing the newer one.
	before := api.writes()
	rep := f.Follow(ctx, []state.Claim{c})
	assert.Equal(t, FollowReport{Superseded: 1}, rep)
	assert.Equal(t, before, api.writes())
	assert.NotNil(t, api.conditionOf(t, "a", apis.ConditionTypeDisruptionReason))

	// Given both, the newest is written.
	api2 := newFollowAPI()
	rep = NewFollower(api2, FollowOptions{}, nil).Follow(ctx, []state.Claim{d, c})
	assert.Equal(t, FollowReport{Written: 1}, rep)
	assert.NotNil(t, api2.conditionOf(t, "a", apis.ConditionTypeDisruptionReason))
}

func TestFollowerRetriesAConflictFromAFreshReadOnceThenLeavesIt(t *testing.T) {
	api := newFollowAPI()
	f := NewFollower(api, FollowOptions{}, nil)
	ctx := context.Background()
	c := followedClaim("a", 3)
	require.Equal(t, 1, f.Follow(ctx, []state.Claim{c}).Written)

	api.conflicts = 1
	gets := api.gets
	rep := f.Follow(ctx, []state.Claim{asCandidate(c)})
	assert.Equal(t, FollowReport{Written: 1}, rep)
	assert.Equal(t, gets+2, api.gets, "the conflict is retried from a fresh GET")

	api.conflicts = 2
	c2 := asCandidate(asCandidate(c))
	c2.Disrupting.Reason = "Drifted"
	rep = f.Follow(ctx, []state.Claim{c2})
	assert.Equal(t, FollowReport{Left: 1}, rep, "a second conflict is left to the sweep, not an error")
}

func TestFollowerIsBoundedByCountAndBudgetAndNeverFails(t *testing.T) {
	ctx := context.Background()
	claims := make([]state.Claim, 0, 7)
	for i := range 7 {
		claims = append(claims, followedClaim("c"+strconv.Itoa(i), 1))
	}

	t.Run("count", func(t *testing.T) {
		api := newFollowAPI()
		rep := NewFollower(api, FollowOptions{MaxWrites: 5}, nil).Follow(ctx, claims)
		assert.Equal(t, FollowReport{Written: 5, Left: 2}, rep)
		assert.Len(t, api.objects, 5)
	})

	t.Run("budget", func(t *testing.T) {
		api := newFollowAPI()
		api.stall = true // an API server that does not answer
		start := time.Now()
		rep := NewFollower(api, FollowOptions{Budget: 50 * time.Millisecond}, nil).Follow(ctx, claims)
		assert.Equal(t, FollowReport{Left: 7}, rep, "what the budget leaves is counted, not failed")
		assert.Less(t, time.Since(start), 5*time.Second, "the writes end with their budget")
	})

	t.Run("deadline", func(t *testing.T) {
		api := newFollowAPI()
		now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
		dctx, cancel := context.WithDeadline(ctx, now.Add(time.Second)) // within the margin of the run's deadline
		defer cancel()
		rep := NewFollower(api, FollowOptions{Margin: 2 * time.Second}, func() time.Time { return now }).Follow(dctx, claims)
		assert.Equal(t, FollowReport{Left: 7}, rep)
		assert.Zero(t, api.gets+api.writes(), "nothing is asked of the API server within the run's margin")
	})

	t.Run("failures", func(t *testing.T) {
		api := newFollowAPI()
		f := NewFollower(api, FollowOptions{}, nil)
		require.Equal(t, 7, f.Follow(ctx, claims).Written)
		api.fail = apierrors.NewForbidden(schema.GroupResource{Group: Group, Resource: NodeClaims.Plural}, "c0", errors.New("refused"))
		changed := make([]state.Claim, 0, len(claims))
		for _, c := range claims {
			changed = append(changed, asCandidate(c))
		}
		rep := f.Follow(ctx, changed)
		assert.Zero(t, rep.Written)
		assert.Len(t, rep.Errors, 7, "each failure is reported for the run's report, and the run goes on")
	})

	t.Run("deleted claims are left to the sweep", func(t *testing.T) {
		api := newFollowAPI()
		gone := followedClaim("gone", 4)
		gone.Lifecycle = state.Deleted
		rep := NewFollower(api, FollowOptions{}, nil).Follow(ctx, []state.Claim{gone})
		assert.Equal(t, FollowReport{}, rep)
		assert.Zero(t, api.gets)
	})
}

func TestFollowerKeepsAMirrorBeingDeletedAsItIs(t *testing.T) {
	api := newFollowAPI()
	f := NewFollower(api, FollowOptions{}, nil)
	ctx := context.Background()
	c := followedClaim("a", 3)
	require.Equal(t, 1, f.Follow(ctx, []state.Claim{c}).Written)
	now := metav1.Now()
	api.objects["a"].SetDeletionTimestamp(&now)
	api.objects["a"].SetFinalizers([]string{Finalizer, metav1.FinalizerDeleteDependents})

	require.Equal(t, 1, f.Follow(ctx, []state.Claim{asCandidate(c)}).Written)
	assert.Equal(t, []string{Finalizer, metav1.FinalizerDeleteDependents}, api.objects["a"].GetFinalizers(), "finalizers are never removed")
	assert.NotNil(t, api.objects["a"].GetDeletionTimestamp())
}

func TestFollowerKeepsTheCapacityTheLifecycleTookFromTheNode(t *testing.T) {
	api := newFollowAPI()
	ctx := context.Background()
	c := followedClaim("a", 3)
	require.Equal(t, 1, NewFollower(api, FollowOptions{}, nil).Follow(ctx, []state.Claim{c}).Written)
	// The lifecycle's sweep wrote the Node's capacity and allocatable, which no claim record holds.
	node := map[string]any{"cpu": "2", "memory": "7910Mi", "pods": "29"}
	require.NoError(t, unstructured.SetNestedField(api.objects["a"].Object, node, "status", "capacity"))
	require.NoError(t, unstructured.SetNestedField(api.objects["a"].Object, node, "status", "allocatable"))

	// A disruption run follows the claim's change without reading its Node: the mirror keeps them.
	rep := NewFollower(api, FollowOptions{}, nil).Follow(ctx, []state.Claim{asCandidate(c)})
	require.Equal(t, FollowReport{Written: 1}, rep)
	require.NotNil(t, api.conditionOf(t, "a", apis.ConditionTypeDisruptionReason))
	for _, f := range []string{"capacity", "allocatable"} {
		got, ok, _ := unstructured.NestedStringMap(api.objects["a"].Object, "status", f)
		assert.True(t, ok, "status.%s is kept", f)
		assert.Equal(t, "7910Mi", got["memory"])
	}
}
