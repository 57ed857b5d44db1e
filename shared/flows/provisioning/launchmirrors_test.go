package provisioning

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/nodewright/nodewright/shared/adapters/mirror"
)

// keptMirrors is a mirror API that keeps the last object and status applied under each name, starting
// empty.
type keptMirrors struct {
	mu      sync.Mutex
	rev     int
	objects map[string]*unstructured.Unstructured
	status  map[string]*unstructured.Unstructured
	deletes int
}

func (k *keptMirrors) ListMetadata(context.Context, metav1.ListOptions) (*metav1.PartialObjectMetadataList, error) {
	return &metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}, nil
}

func (k *keptMirrors) WatchMetadata(context.Context, metav1.ListOptions) (watch.Interface, error) {
	ch := make(chan watch.Event)
	close(ch)
	return watch.NewProxyWatcher(ch), nil
}

func (k *keptMirrors) keep(into map[string]*unstructured.Unstructured, u *unstructured.Unstructured) (string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.rev++
	into[u.GetName()] = u.DeepCopy()
	return strconv.Itoa(k.rev + 1), nil
}

func (k *keptMirrors) Apply(_ context.Context, u *unstructured.Unstructured) (string, error) {
	return k.keep(k.objects, u)
}

func (k *keptMirrors) ApplyStatus(_ context.Context, u *unstructured.Unstructured) (string, error) {
	return k.keep(k.status, u)
}

func (k *keptMirrors) Replace(_ context.Context, u, st *unstructured.Unstructured) (string, error) {
	if _, err := k.keep(k.objects, u); err != nil {
		return "", err
	}
	return k.keep(k.status, st)
}

func (k *keptMirrors) Delete(context.Context, string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.deletes++
	return nil
}

// condition finds a condition of a kept status by type.
func (k *keptMirrors) condition(t *testing.T, name, typ string) map[string]any {
	t.Helper()
	k.mu.Lock()
	defer k.mu.Unlock()
	st := k.status[name]
	require.NotNil(t, st, "the status of %s was written", name)
	conds, _, err := unstructured.NestedSlice(st.Object, "status", "conditions")
	require.NoError(t, err)
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			return m
		}
	}
	t.Fatalf("%s has no %s condition: %v", name, typ, conds)
	return nil
}

// TestARunMirrorsTheClaimsItLaunchesAtOnce: the claim a run launches has its NodeClaim mirror when the
// run ends, as recorded (its instance, its labels), launched and not ready until its Node registers,
// without waiting for the lifecycle function.
func TestARunMirrorsTheClaimsItLaunchesAtOnce(t *testing.T) {
	w := newTestProvisioner(t, fakeCluster{snap: pendingSnapshot(pod("a", nil), pod("b", nil))})
	api := &keptMirrors{objects: map[string]*unstructured.Unstructured{}, status: map[string]*unstructured.Unstructured{}}
	w.p.deps.Mirrors = &LaunchMirrors{Claims: w.store, Writer: mirror.NewWriter(mirror.NodeClaims, api, mirror.Options{})}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := w.p.Run(ctx, "run-1")
	require.NoError(t, err)
	assert.Empty(t, rep.Errors)
	require.Len(t, rep.Claims, 1)
	name := rep.Claims[0].Name
	assert.Equal(t, 1, rep.MirrorsWritten)
	assert.Zero(t, rep.MirrorsLeft)

	obj := api.objects[name]
	require.NotNil(t, obj, "the launched claim's mirror was written")
	assert.Equal(t, "m5.xlarge", obj.GetLabels()["node.kubernetes.io/instance-type"])
	assert.Equal(t, "spot", obj.GetLabels()["karpenter.sh/capacity-type"])
	assert.NotEmpty(t, obj.GetAnnotations()[mirror.HashAnnotation], "written whole: the hash goes last")
	provider, _, _ := unstructured.NestedString(api.status[name].Object, "status", "providerID")
	assert.Contains(t, provider, rep.Claims[0].InstanceID)
	assert.Equal(t, "True", api.condition(t, name, "Launched")["status"])
	ready := api.condition(t, name, "Ready")
	assert.Equal(t, "False", ready["status"], "launched, its Node not registered yet")
	assert.Equal(t, "NodeNotFound", ready["reason"])
	assert.Zero(t, api.deletes, "the provisioner never deletes a mirror")
}

// TestARunNearItsDeadlineLeavesTheMirrorsToTheLifecycle: a run within LaunchMargin of its deadline after
// its launches writes no mirror and says how many it left.
func TestARunNearItsDeadlineLeavesTheMirrorsToTheLifecycle(t *testing.T) {
	w := newTestProvisioner(t, fakeCluster{snap: pendingSnapshot(pod("a", nil))})
	api := &keptMirrors{objects: map[string]*unstructured.Unstructured{}, status: map[string]*unstructured.Unstructured{}}
	w.p.deps.Mirrors = &LaunchMirrors{Claims: w.store, Writer: mirror.NewWriter(mirror.NodeClaims, api, mirror.Options{})}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep := Report{Claims: []LaunchedClaim{{Name: "default-abcde"}}}
	w.p.cfg.LaunchMargin = 2 * time.Minute // the deadline is a minute away: within the margin

	w.p.writeLaunchMirrors(ctx, &rep)
	assert.Zero(t, rep.MirrorsWritten)
	assert.Equal(t, 1, rep.MirrorsLeft)
	assert.Empty(t, api.objects)
	assert.Empty(t, rep.Errors)
}

// stalledMirrors is a mirror API whose writes hang until their context ends (an API server that stopped
// answering).
type stalledMirrors struct{ keptMirrors }

func (s *stalledMirrors) Apply(ctx context.Context, _ *unstructured.Unstructured) (string, error) {
	<-ctx.Done()
	return "", ctx.Err()
}

func (s *stalledMirrors) ApplyStatus(ctx context.Context, _ *unstructured.Unstructured) (string, error) {
	<-ctx.Done()
	return "", ctx.Err()
}

// TestStalledMirrorWritesNeverCostTheRunItsMarks: writing the launched claims' mirrors comes last and
// within its own budget, so mirror writes that hang leave the mirrors to the lifecycle function and the
// run still records its snapshot mark and ends without an error. (Before, the writes came before the mark
// with the run's whole time: in the burst scenario they used it up and the mark failed with "context
// deadline exceeded".)
func TestStalledMirrorWritesNeverCostTheRunItsMarks(t *testing.T) {
	w := newTestProvisioner(t, fakeCluster{snap: pendingSnapshot(pod("a", nil), pod("b", nil))})
	api := &stalledMirrors{keptMirrors{objects: map[string]*unstructured.Unstructured{}, status: map[string]*unstructured.Unstructured{}}}
	w.p.deps.Mirrors = &LaunchMirrors{Claims: w.store, Writer: mirror.NewWriter(mirror.NodeClaims, api, mirror.Options{})}
	w.p.cfg.LaunchMargin = time.Second
	w.p.cfg.LaunchMirrorBudget = 200 * time.Millisecond

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rep, err := w.p.Run(ctx, "run-1")
	require.NoError(t, err)
	assert.Empty(t, rep.Errors, "a stalled mirror write is left, not an error, and costs the run nothing else")
	require.Len(t, rep.Claims, 1)
	assert.Zero(t, rep.MirrorsWritten)
	assert.Equal(t, 1, rep.MirrorsLeft, "left to the lifecycle function")
	require.NoError(t, ctx.Err(), "the run ended well inside its deadline")
}
