package lifecycle

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodewright/nodewright/shared/adapters/mirror"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// deletedMirrors is a MirrorWriter whose Sync writes nothing and whose Deleting lists what the test says.
type deletedMirrors struct {
	deleting []mirror.Deletion
	syncs    int
}

func (d *deletedMirrors) Sync(context.Context, []mirror.Object, bool) (mirror.Report, error) {
	d.syncs++
	return mirror.Report{}, nil
}

func (d *deletedMirrors) Deleting() []mirror.Deletion { return d.deleting }

func TestADeletedMirrorBecomesTheDisruptionRequestOfItsClaim(t *testing.T) {
	asked := claimOn("default-asked", "default", state.Initialized, "i-0asked", "ip-asked")
	operator := state.DisruptionRequest{Reason: "kernel update", RequestedAt: testNow.Add(-time.Hour), By: "alice"}
	asked.DisruptionRequest = &operator
	plain := claimOn("default-plain", "default", state.Initialized, "i-0plain", "ip-plain")
	draining := claimOn("default-draining", "default", state.Draining, "i-0draining", "ip-draining")
	draining.DrainingAt = at(testNow, -time.Minute)
	unregistered := claimOn("default-launched", "default", state.Launched, "i-0launched", "")
	unregistered.CreatedAt, unregistered.LaunchedAt = testNow.Add(-time.Minute), at(testNow, -time.Minute)
	claims := []state.Claim{asked, plain, draining, unregistered}
	var nodes listedNodes
	for _, c := range claims[:3] {
		nodes = append(nodes, ourNode(c.NodeName, c.InstanceID, false))
	}
	since := testNow.Add(-2 * time.Minute)
	mirrors := &deletedMirrors{}
	for _, name := range []string{"default-asked", "default-draining", "default-gone", "default-launched", "default-plain"} {
		mirrors.deleting = append(mirrors.deleting, mirror.Deletion{Name: name, UID: types.UID("uid-" + name), Since: since})
	}
	store := &hookStore{fakeStore: fakeStore{claims: claims}, config: configItems()[:1]}
	events := &recEvents{}
	now := testNow
	r := NewRunner(RunnerConfig{SweepEvery: time.Hour}, RunnerDeps{Store: store, Nodes: nodes, NodeActions: &recWriter{},
		Instances: listedInstances{list: tagged(claims...)}, Terminations: &queue{}, Events: events, Mirrors: mirrors,
		Now: func() time.Time { return now }})

	rep, err := r.Run(context.Background(), "sweep")
	require.NoError(t, err)
	assert.Empty(t, rep.Errors, rep.String())
	assert.ElementsMatch(t, []string{"default-launched", "default-plain"}, rep.DeletionsRequested, rep.String())
	got := store.claim(t, "default-plain").DisruptionRequest
	require.NotNil(t, got)
	assert.Equal(t, state.DisruptionRequest{Reason: "its NodeClaim mirror was deleted", RequestedAt: since, By: state.MirrorDeletionRequester}, *got,
		"what `nodewright disrupt` writes, naming the mirror's deletion as who asked, dated by it")
	assert.Equal(t, operator, *store.claim(t, "default-asked").DisruptionRequest, "an earlier request stands")
	assert.Nil(t, store.claim(t, "default-draining").DisruptionRequest, "a draining claim needs nothing more")
	assert.Equal(t, state.Draining, store.claim(t, "default-draining").Lifecycle)
	assert.Contains(t, store.decisionsOf("nodeclaim/default-plain"), KindMirrorDeleted+"/"+string(ReasonMirrorDeleted))
	assert.Equal(t, []string{string(ReasonMirrorDeleted)}, reasonStrings(events.on("NodeClaim", "default-plain")), "an Event on the mirror")
	for _, e := range events.events {
		if e.Object.Name == "default-plain" {
			assert.Equal(t, mirror.APIVersion, e.Object.APIVersion, "the nodewright.sh mirror, not a karpenter.sh NodeClaim")
			assert.Equal(t, types.UID("uid-default-plain"), e.Object.UID)
		}
	}

	// Between sweeps a pass reads only the joining claims: it asks for nothing, even for a new deletion.
	store.mu.Lock()
	for i := range store.claims {
		if store.claims[i].Name == "default-plain" {
			store.claims[i].DisruptionRequest = nil
		}
	}
	store.mu.Unlock()
	now = now.Add(time.Minute)
	rep, err = r.Run(context.Background(), "between")
	require.NoError(t, err)
	assert.NotEmpty(t, rep.Skipped, "not a sweep")
	assert.Empty(t, rep.DeletionsRequested)
	assert.Nil(t, store.claim(t, "default-plain").DisruptionRequest)
}

func TestDeletionRequestsAreBoundedPerPass(t *testing.T) {
	var claims []state.Claim
	var nodes listedNodes
	mirrors := &deletedMirrors{}
	for i := range maxDeletionRequests + 20 {
		c := claimOn(fmt.Sprintf("default-%03d", i), "default", state.Initialized, fmt.Sprintf("i-0%03d", i), fmt.Sprintf("ip-%03d", i))
		claims = append(claims, c)
		nodes = append(nodes, ourNode(c.NodeName, c.InstanceID, false))
		mirrors.deleting = append(mirrors.deleting, mirror.Deletion{Name: c.Name, Since: testNow})
	}
	store := &hookStore{fakeStore: fakeStore{claims: claims}, config: configItems()[:1]}
	r := NewRunner(RunnerConfig{}, RunnerDeps{Store: store, Nodes: nodes, NodeActions: &recWriter{},
		Instances: listedInstances{list: tagged(claims...)}, Terminations: &queue{}, Events: &recEvents{}, Mirrors: mirrors,
		Now: func() time.Time { return testNow }})
	rep, err := r.Run(context.Background(), "first")
	require.NoError(t, err)
	assert.Len(t, rep.DeletionsRequested, maxDeletionRequests)
	assert.Contains(t, fmt.Sprint(rep.Errors), "20 more deleted mirrors wait for the next sweep")
	rep, err = r.Run(context.Background(), "second")
	require.NoError(t, err)
	assert.Len(t, rep.DeletionsRequested, 20, "the next sweep takes the rest")
}

func reasonStrings[T ~string](rs []T) []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		out = append(out, string(r))
	}
	return out
}
