package mirror

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
)

// recordedEvents keeps what was published.
type recordedEvents struct {
	mu  sync.Mutex
	all []kube.Event
}

func (r *recordedEvents) Publish(_ context.Context, e kube.Event) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.all = append(r.all, e)
	return true, nil
}

func (r *recordedEvents) take() []kube.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.all
	r.all = nil
	return out
}

type statusEnv struct {
	poolAPI, classAPI *fakeAPI
	events            *recordedEvents
	w                 *StatusWriter
}

func newStatusEnv() *statusEnv {
	e := &statusEnv{poolAPI: newFakeAPI(), classAPI: newFakeAPI(), events: &recordedEvents{}}
	e.w = NewStatusWriter(NewWriter(NodePools, e.poolAPI, Options{}), NewWriter(EC2NodeClasses, e.classAPI, Options{}), e.events)
	return e
}

func allReady() apis.EC2NodeClassStatus {
	return resolved(ok("SubnetsReady"), ok("SecurityGroupsReady"), ok("AMIsReady"), ok("InstanceProfileReady"))
}

func missingSubnet() apis.EC2NodeClassStatus {
	return resolved(metav1.Condition{Type: "SubnetsReady", Status: "False", Reason: "SubnetsNotFound", Message: "subnetSelectorTerms match no subnet"},
		ok("SecurityGroupsReady"), ok("AMIsReady"), ok("InstanceProfileReady"))
}

func config(pools int, class apis.EC2NodeClassStatus) Configuration {
	cfg := Configuration{Classes: []Class{{EC2NodeClass: testClass("default"), Status: class}}}
	for i := range pools {
		cfg.Pools = append(cfg.Pools, Pool{NodePool: testPool(fmt.Sprintf("pool-%d", i), "default"), TemplateHash: "t1", ClassHash: "c1",
			Claims: []PoolClaim{poolClaim(fmt.Sprintf("pool-%d-a", i), state.Initialized, "2", "8Gi")}})
	}
	return cfg
}

func TestASteadyConfigurationWritesNoMirror(t *testing.T) {
	ctx := context.Background()
	e := newStatusEnv()
	rep := e.w.Write(ctx, config(3, allReady()), t0)
	require.Empty(t, rep.Errors)
	assert.Equal(t, 3, rep.Pools.Written)
	assert.Equal(t, 1, rep.Classes.Written)
	statusOf := func(api *fakeAPI, name string) map[string]any {
		return api.objects[name].status.(map[string]any)
	}
	assert.Equal(t, int64(1), statusOf(e.poolAPI, "pool-0")["nodes"], "status.nodes is written")

	e.poolAPI.resetCounts()
	e.classAPI.resetCounts()
	rep = e.w.Write(ctx, config(3, allReady()), t0.Add(10*time.Minute))
	require.Empty(t, rep.Errors)
	assert.Equal(t, 0, rep.Pools.Written+rep.Classes.Written)
	assert.Equal(t, 0, e.poolAPI.writes()+e.classAPI.writes(), "nothing changed: nothing written")
	assert.Empty(t, e.events.take(), "a ready class tells nothing")

	two := config(2, allReady())
	rep = e.w.Write(ctx, two, t0.Add(11*time.Minute))
	assert.Equal(t, 1, rep.Pools.Deleted, "the mirror of a NodePool no longer configured is deleted")
}

func TestAClassThatIsNotReadyIsToldOnTheClassAndItsPools(t *testing.T) {
	ctx := context.Background()
	e := newStatusEnv()
	rep := e.w.Write(ctx, config(2, allReady()), t0)
	require.Empty(t, rep.Errors)
	ltt := func(api *fakeAPI, name, typ string) string {
		for _, c := range api.objects[name].status.(map[string]any)["conditions"].([]any) {
			if m := c.(map[string]any); m["type"] == typ {
				return fmt.Sprint(m["status"], " ", m["lastTransitionTime"])
			}
		}
		return ""
	}
	validatedAt := ltt(e.classAPI, "default", "ValidationSucceeded")

	rep = e.w.Write(ctx, config(2, missingSubnet()), t0.Add(time.Minute))
	require.Empty(t, rep.Errors)
	assert.Equal(t, 1, rep.Classes.Written)
	assert.Equal(t, 2, rep.Pools.Written, "both pools' NodeClassReady changed")
	assert.Equal(t, "False "+t0.Add(time.Minute).Format(time.RFC3339), ltt(e.classAPI, "default", "SubnetsReady"))
	assert.Equal(t, validatedAt, ltt(e.classAPI, "default", "ValidationSucceeded"), "an unchanged condition keeps its time")
	assert.Equal(t, "False "+t0.Add(time.Minute).Format(time.RFC3339), ltt(e.poolAPI, "pool-0", "NodeClassReady"))

	events := e.events.take()
	require.Len(t, events, 3, "one on the class, one on each pool")
	byKind := map[string][]kube.Event{}
	for _, ev := range events {
		byKind[ev.Object.Kind] = append(byKind[ev.Object.Kind], ev)
		assert.Equal(t, APIVersion, ev.Object.APIVersion)
		assert.Equal(t, "uid-"+ev.Object.Name, string(ev.Object.UID), "the mirror's UID, so kubectl describe shows it")
		assert.Equal(t, "Warning", ev.Type)
	}
	require.Len(t, byKind["EC2NodeClass"], 1)
	assert.Equal(t, kube.Reason("SubnetsNotFound"), byKind["EC2NodeClass"][0].Reason, "the class's not-ready reason")
	for _, ev := range byKind["NodePool"] {
		assert.Equal(t, kube.ReasonNodeClassNotReady, ev.Reason)
		assert.Contains(t, ev.Message, "subnetSelectorTerms match no subnet")
	}

	e.w.Write(ctx, config(2, missingSubnet()), t0.Add(5*time.Minute))
	assert.Empty(t, e.events.take(), "the same state is not told again within 10 minutes")
	e.w.Write(ctx, config(2, missingSubnet()), t0.Add(12*time.Minute))
	assert.Len(t, e.events.take(), 3, "a state that lasts is told again every 10 minutes")

	many := config(40, missingSubnet())
	e.w.Write(ctx, many, t0.Add(13*time.Minute))
	e.events.take()
	e.w.Write(ctx, many, t0.Add(14*time.Minute)) // the new mirrors' UIDs are known now
	assert.Len(t, e.events.take(), maxStatusEvents, "a run publishes at most maxStatusEvents")
}

func TestAClassThatCouldNotBeResolvedKeepsItsMirror(t *testing.T) {
	ctx := context.Background()
	e := newStatusEnv()
	e.w.Write(ctx, config(1, allReady()), t0)
	cfg := config(1, allReady())
	cfg.Classes, cfg.Unresolved = nil, []string{"default"}
	rep := e.w.Write(ctx, cfg, t0.Add(time.Minute))
	require.Empty(t, rep.Errors)
	assert.Equal(t, 0, rep.Classes.Deleted, "a class whose resolution failed is not deleted")
	assert.Contains(t, e.classAPI.objects, "default")
	assert.Equal(t, 0, rep.Pools.Written, "its pools' NodeClassReady stays as it was")

	cfg.Unresolved = nil
	rep = e.w.Write(ctx, cfg, t0.Add(2*time.Minute))
	assert.Equal(t, 1, rep.Classes.Deleted, "a class no longer configured is deleted")
	assert.Equal(t, 1, rep.Pools.Written, "and its pools say so")
	assert.Equal(t, ReasonNodeClassNotFound, func() string {
		for _, c := range e.poolAPI.objects["pool-0"].status.(map[string]any)["conditions"].([]any) {
			if m := c.(map[string]any); m["type"] == "NodeClassReady" {
				return fmt.Sprint(m["reason"])
			}
		}
		return ""
	}())
}

// TestAPoolOf5000ClaimsIsRewrittenOnlyWhenItsSumsChange: at the ceiling's size a steady pool writes
// nothing; one more node joining rewrites the pool's mirror once.
func TestAPoolOf5000ClaimsIsRewrittenOnlyWhenItsSumsChange(t *testing.T) {
	ctx := context.Background()
	e := newStatusEnv()
	build := func(n int) Configuration {
		cfg := config(0, allReady())
		p := Pool{NodePool: testPool("default", "default"), TemplateHash: "t1", ClassHash: "c1"}
		for i := range n {
			p.Claims = append(p.Claims, poolClaim(fmt.Sprintf("default-%05d", i), state.Initialized, "2", "8Gi"))
		}
		cfg.Pools = []Pool{p}
		return cfg
	}
	rep := e.w.Write(ctx, build(5000), t0)
	require.Empty(t, rep.Errors)
	assert.Equal(t, int64(5000), e.poolAPI.objects["default"].status.(map[string]any)["nodes"])
	e.poolAPI.resetCounts()
	rep = e.w.Write(ctx, build(5000), t0.Add(time.Minute))
	assert.Equal(t, 0, rep.Pools.Written+e.poolAPI.writes(), "a steady state writes nothing")
	rep = e.w.Write(ctx, build(5001), t0.Add(2*time.Minute))
	assert.Equal(t, 1, rep.Pools.Written)
	assert.Equal(t, int64(5001), e.poolAPI.objects["default"].status.(map[string]any)["nodes"])
}
