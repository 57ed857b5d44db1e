package mirror

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

var t0 = time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)

// initializedClaim is a claim whose Node joined, with that Node.
func initializedClaim(i int) Claim {
	name := fmt.Sprintf("default-%05d", i)
	launched, registered, initialized := t0.Add(time.Minute), t0.Add(2*time.Minute), t0.Add(3*time.Minute)
	node := fmt.Sprintf("ip-10-0-%d-%d.ec2.internal", i/250, i%250)
	c := state.Claim{Name: name, NodePool: "default", NodeClass: "default", Lifecycle: state.Initialized,
		InstanceTypes: []string{"m5.large", "m5.xlarge"}, Requests: map[string]string{"cpu": "1500m", "memory": "3Gi"},
		Labels:     map[string]string{"karpenter.sh/nodepool": "default", "node.kubernetes.io/instance-type": "m5.large", "team": "a"},
		InstanceID: fmt.Sprintf("i-%017d", i), InstanceType: "m5.large", Zone: "us-east-1a", CapacityType: "on-demand",
		ProviderID: fmt.Sprintf("aws:///us-east-1a/i-%017d", i), ImageID: "ami-0123456789abcdef0", NodeName: node,
		CreatedAt: t0, LaunchedAt: &launched, RegisteredAt: &registered, InitializedAt: &initialized}
	capacity := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("7910Mi")}
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}, Spec: corev1.NodeSpec{ProviderID: c.ProviderID},
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity}}
	return Claim{Record: c, Node: n, Now: t0.Add(time.Hour)}
}

func claims(n int) []Object {
	out := make([]Object, n)
	for i := range out {
		out[i] = NodeClaim(initializedClaim(i))
	}
	return out
}

func TestASteadyStateOf5000ClaimsWritesNothing(t *testing.T) {
	ctx := context.Background()
	api := newFakeAPI()
	objs := claims(5000)
	w := NewWriter(NodeClaims, api, Options{MaxWrites: 10000})
	rep, err := w.Sync(ctx, objs, true)
	require.NoError(t, err)
	assert.Equal(t, 5000, rep.Written, "the first run writes every mirror")
	assert.True(t, rep.Learned)

	api.resetCounts()
	again := claims(5000) // built afresh, as the next pass builds them
	for i := range again {
		again[i] = NodeClaim(func() Claim { c := initializedClaim(i); c.Now = t0.Add(2 * time.Hour); return c }())
	}
	rep, err = w.Sync(ctx, again, true)
	require.NoError(t, err)
	assert.Equal(t, Report{Unchanged: 5000}, rep, "a second pass with no change writes nothing")
	assert.Equal(t, 0, api.writes())
	assert.Equal(t, 0, api.lists, "a warm writer does not list again")
	assert.Equal(t, 1, api.watches, "it follows the others' changes with one watch")

	cold := NewWriter(NodeClaims, api, Options{MaxWrites: 10000})
	api.resetCounts()
	rep, err = cold.Sync(ctx, again, true)
	require.NoError(t, err)
	assert.Equal(t, 0, api.writes(), "a cold start learns the mirrors from their hashes and writes nothing")
	assert.Equal(t, 5000, rep.Unchanged)
	assert.Equal(t, 10, api.lists, "one LIST, in pages of %d", listPageSize)
}

func TestWritesAreBoundedPerRun(t *testing.T) {
	ctx := context.Background()
	api := newFakeAPI()
	w := NewWriter(NodeClaims, api, Options{})
	objs := claims(450)
	for i, want := range []struct{ written, left int }{{200, 250}, {200, 50}, {50, 0}, {0, 0}} {
		rep, err := w.Sync(ctx, objs, true)
		require.NoError(t, err)
		assert.Equal(t, want.written, rep.Written, "run %d", i)
		assert.Equal(t, want.left, rep.Left, "run %d", i)
	}
	assert.Len(t, api.objects, 450)
}

func TestChangesGoBeforeNewMirrors(t *testing.T) {
	ctx := context.Background()
	api := newFakeAPI()
	w := NewWriter(NodeClaims, api, Options{MaxWrites: 1})
	objs := claims(1)
	_, err := w.Sync(ctx, objs, true)
	require.NoError(t, err)
	draining := initializedClaim(0)
	draining.Lifecycle, draining.Record.DisruptionReason = state.Draining, "Expired"
	objs = append([]Object{NodeClaim(initializedClaim(1))}, NodeClaim(draining))
	rep, err := w.Sync(ctx, objs, true)
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Written)
	assert.Equal(t, 1, rep.Left)
	assert.NotContains(t, api.objects, "default-00001", "the new mirror waits")
	assert.Contains(t, fmt.Sprint(api.objects["default-00000"].status), "Expired", "the change of an existing one went first")
}

func TestAStatusChangeWritesTheStatusThenTheHash(t *testing.T) {
	ctx := context.Background()
	api := newFakeAPI()
	w := NewWriter(NodeClaims, api, Options{})
	_, err := w.Sync(ctx, claims(1), true)
	require.NoError(t, err)
	assert.Equal(t, 2, api.applies, "a new mirror: created, then its hash written after its status")
	assert.Equal(t, 1, api.statusApplies)

	api.resetCounts()
	drifted := initializedClaim(0)
	drifted.Record.Drifted = &state.DriftCondition{Reason: "AMIDrift", Details: map[string]string{"old": "ami-1", "new": "ami-2"}, Since: t0}
	rep, err := w.Sync(ctx, []Object{NodeClaim(drifted)}, false)
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Written)
	assert.Equal(t, 1, api.statusApplies)
	assert.Equal(t, 1, api.applies, "the hash is written last")
	assert.Contains(t, fmt.Sprint(api.objects["default-00000"].status), "AMIDrift")
}

func TestAMirrorSomeoneElseChangedIsWrittenAgain(t *testing.T) {
	ctx := context.Background()
	api := newFakeAPI()
	w := NewWriter(NodeClaims, api, Options{})
	objs := claims(3)
	_, err := w.Sync(ctx, objs, true)
	require.NoError(t, err)
	want := api.objects["default-00001"].spec
	api.edit("default-00001", map[string]any{"requirements": []any{}})

	api.resetCounts()
	rep, err := w.Sync(ctx, objs, true)
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Written, "only the changed mirror")
	assert.Equal(t, 1, api.replaces, "replaced whole")
	assert.Equal(t, want, api.objects["default-00001"].spec, "written back as the claim says")
	assert.NotContains(t, api.objects["default-00001"].labels, "theirs", "what they added goes too")
	assert.NotEmpty(t, api.objects["default-00001"].annotations[HashAnnotation], "and the hash is written last")

	api.remove("default-00002")
	rep, err = w.Sync(ctx, objs, true)
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Written)
	assert.Contains(t, api.objects, "default-00002", "a mirror deleted by someone else is written again while its claim lives")
}

func TestAMirrorWhoseClaimIsGoneIsDeletedOnAWholeRunOnly(t *testing.T) {
	ctx := context.Background()
	api := newFakeAPI()
	w := NewWriter(NodeClaims, api, Options{})
	objs := claims(3)
	_, err := w.Sync(ctx, objs, true)
	require.NoError(t, err)

	rep, err := w.Sync(ctx, objs[:1], false)
	require.NoError(t, err)
	assert.Equal(t, 0, rep.Deleted, "a partial read deletes nothing")
	assert.Len(t, api.objects, 3)

	rep, err = w.Sync(ctx, objs[:1], true)
	require.NoError(t, err)
	assert.Equal(t, 2, rep.Deleted)
	assert.Len(t, api.objects, 1)
	assert.Contains(t, api.objects, "default-00000")
}

func TestAHalfWrittenMirrorIsWrittenAgain(t *testing.T) {
	ctx := context.Background()
	api := newFakeAPI()
	w := NewWriter(NodeClaims, api, Options{})
	api.failNext["status"] = fmt.Errorf("connection reset")
	rep, err := w.Sync(ctx, claims(1), true)
	require.NoError(t, err)
	assert.Equal(t, []string{"nodeclaim/default-00000: writing status: connection reset"}, rep.Errors)
	assert.Empty(t, api.objects["default-00000"].annotations[HashAnnotation], "no hash for content not written")

	cold := NewWriter(NodeClaims, api, Options{})
	rep, err = cold.Sync(ctx, claims(1), true)
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Written, "a cold start does not trust a mirror without its hash")
	assert.NotNil(t, api.objects["default-00000"].status)
	rep, err = w.Sync(ctx, claims(1), true)
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Written, "to the first writer the other's write is someone else's: written once more")
	rep, err = w.Sync(ctx, claims(1), true)
	require.NoError(t, err)
	assert.Equal(t, 0, rep.Written, "then settled")
}

// TestAReplaceOthersKeptConflictingWithIsLeftNotFailed: a mirror whose status write lost its answer is
// replaced whole next run; when other functions' writes of it conflict with every attempt (the API's
// Replace returns the conflict only then), the write is left for the next run, which replaces it.
func TestAReplaceOthersKeptConflictingWithIsLeftNotFailed(t *testing.T) {
	ctx := context.Background()
	api := newFakeAPI()
	w := NewWriter(NodeClaims, api, Options{})
	api.failNext["status"] = fmt.Errorf("connection reset")
	_, err := w.Sync(ctx, claims(1), true)
	require.NoError(t, err)

	api.failNext["replace"] = apierrors.NewConflict(schema.GroupResource{Group: Group, Resource: NodeClaims.Plural}, "default-00000",
		fmt.Errorf("the object has been modified"))
	rep, err := w.Sync(ctx, claims(1), true)
	require.NoError(t, err)
	assert.Empty(t, rep.Errors, "another function's write is not this writer's failure")
	assert.Equal(t, 1, rep.Left)
	rep, err = w.Sync(ctx, claims(1), true)
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Written, "replaced on the next run")
	assert.Equal(t, 2, api.replaces)
}

func TestAWatchTheServerCannotServeListsAgain(t *testing.T) {
	ctx := context.Background()
	api := newFakeAPI()
	w := NewWriter(NodeClaims, api, Options{})
	objs := claims(2)
	_, err := w.Sync(ctx, objs, true)
	require.NoError(t, err)
	api.remove("default-00000")
	api.compact = api.rev + 1

	api.resetCounts()
	rep, err := w.Sync(ctx, objs, true)
	require.NoError(t, err)
	assert.True(t, rep.Learned, "410 Gone: listed again")
	assert.Equal(t, 1, api.lists)
	assert.Equal(t, 1, rep.Written, "the deleted mirror is written again")
}

func TestWithoutTheCRDsTheWriterSaysSo(t *testing.T) {
	api := newFakeAPI()
	api.missing = true
	_, err := NewWriter(NodeClaims, api, Options{}).Sync(context.Background(), claims(1), true)
	require.ErrorIs(t, err, ErrNotInstalled)
	assert.Contains(t, err.Error(), "nodewright manifests")
	assert.Equal(t, 0, api.writes())
}
