package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// recNamer records the Name tags set, by instance id; fail names the ids whose tag fails.
type recNamer struct {
	mu    sync.Mutex
	named map[string]string
	fail  map[string]bool
}

func (r *recNamer) NameInstance(_ context.Context, id, node string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail[id] {
		return errors.New("throttled")
	}
	if r.named == nil {
		r.named = map[string]string{}
	}
	r.named[id] = node
	return nil
}

// ownInstance is a running instance of the cluster launched for claim, with extra tags.
func ownInstance(id, claim string, extra map[string]string) instance.Instance {
	tags := map[string]string{instance.TagCluster: "test", instance.TagNodeClaim: claim}
	for k, v := range extra {
		tags[k] = v
	}
	return instance.Instance{ID: id, Zone: "us-east-1a", State: "running", LaunchTime: testNow, Tags: tags}
}

// A sweep gives the instance of each claim whose Node has registered the Name tag Karpenter gives it: the
// Node's name. An instance named already (by the EC2NodeClass's tags, or an earlier sweep) keeps its name,
// as with Karpenter; a claim whose Node has not joined, or that is on its way out, names nothing.
func TestSweepNamesInstancesAfterTheirNodes(t *testing.T) {
	r := newRig(t,
		claimOn("joined", "default", state.Initialized, "i-0joined", "ip-10-0-0-1.ec2.internal"),
		claimOn("registered", "default", state.Registered, "i-0registered", "ip-10-0-0-2.ec2.internal"),
		claimOn("named", "default", state.Initialized, "i-0named", "ip-10-0-0-3.ec2.internal"),
		claimOn("booting", "default", state.Launched, "i-0booting", ""),
		claimOn("draining", "default", state.Draining, "i-0draining", "ip-10-0-0-5.ec2.internal"))
	r.nodes = listedNodes{ourNode("ip-10-0-0-1.ec2.internal", "i-0joined", false), ourNode("ip-10-0-0-2.ec2.internal", "i-0registered", false),
		ourNode("ip-10-0-0-3.ec2.internal", "i-0named", false), ourNode("ip-10-0-0-5.ec2.internal", "i-0draining", false)}
	r.instances = listedInstances{list: []instance.Instance{
		ownInstance("i-0joined", "joined", nil), ownInstance("i-0registered", "registered", nil),
		ownInstance("i-0named", "named", map[string]string{instance.TagName: "payments-node"}),
		ownInstance("i-0booting", "booting", nil), ownInstance("i-0draining", "draining", nil),
	}}
	r.store.config = configItems()[:1] // the valid NodePool only
	namer := &recNamer{}
	r.namer = namer
	rep := r.run(t)

	assert.Equal(t, map[string]string{"i-0joined": "ip-10-0-0-1.ec2.internal", "i-0registered": "ip-10-0-0-2.ec2.internal"}, namer.named)
	assert.Equal(t, 2, rep.InstancesNamed)
	assert.Empty(t, rep.Errors)
}

// A Name tag that fails is an item's error; the next sweep, which finds the instance still unnamed,
// tries again.
func TestAFailedNameIsTriedAgainByTheNextSweep(t *testing.T) {
	r := newRig(t, claimOn("joined", "default", state.Initialized, "i-0joined", "ip-10-0-0-1.ec2.internal"))
	r.nodes = listedNodes{ourNode("ip-10-0-0-1.ec2.internal", "i-0joined", false)}
	r.instances = listedInstances{list: []instance.Instance{ownInstance("i-0joined", "joined", nil)}}
	r.store.config = configItems()[:1]
	namer := &recNamer{fail: map[string]bool{"i-0joined": true}}
	r.namer = namer
	rep := r.run(t)
	assert.Zero(t, rep.InstancesNamed)
	require.Len(t, rep.Errors, 1)
	assert.Contains(t, rep.Errors[0], "i-0joined")

	namer.fail = nil
	rep = r.run(t)
	assert.Equal(t, 1, rep.InstancesNamed)
	assert.Equal(t, "ip-10-0-0-1.ec2.internal", namer.named["i-0joined"])
}

// A sweep names at most MaxNamesPerSweep instances (CreateTags shares EC2's request budget with the
// launches), in instance id order; the rest wait for the next sweeps.
func TestASweepNamesABoundedNumberOfInstances(t *testing.T) {
	var claims []state.Claim
	var list []instance.Instance
	for i := range MaxNamesPerSweep + 5 {
		name, id := fmt.Sprintf("c%03d", i), fmt.Sprintf("i-0%03d", i)
		claims = append(claims, claimOn(name, "default", state.Initialized, id, "ip-"+name))
		list = append(list, ownInstance(id, name, nil))
	}
	r := newRig(t, claims...)
	r.instances = listedInstances{list: list}
	namer := &recNamer{}
	r.namer = namer
	rep := r.run(t)
	assert.Equal(t, MaxNamesPerSweep, rep.InstancesNamed)
	require.Len(t, namer.named, MaxNamesPerSweep)
	ids := make([]string, 0, len(namer.named))
	for id := range namer.named {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	assert.Equal(t, "i-0000", ids[0])
	assert.Equal(t, fmt.Sprintf("i-0%03d", MaxNamesPerSweep-1), ids[len(ids)-1])
}

// Between sweeps a pass lists no instances, so it names none.
func TestAPassBetweenSweepsNamesNothing(t *testing.T) {
	r := newRig(t, claimOn("joined", "default", state.Initialized, "i-0joined", "ip-10-0-0-1.ec2.internal"))
	r.instances = listedInstances{list: []instance.Instance{ownInstance("i-0joined", "joined", nil)}}
	namer := &recNamer{}
	runner := NewRunner(RunnerConfig{SweepEvery: DefaultSweepEvery}, RunnerDeps{Store: r.store, Nodes: r.nodes, NodeActions: r.writer,
		Instances: r.instances, Terminations: r.queue, Namer: namer, Now: func() time.Time { return r.now }})
	_, err := runner.Run(context.Background(), "run-1")
	require.NoError(t, err)
	require.Len(t, namer.named, 1, "the first pass sweeps")
	namer.named = nil
	r.now = r.now.Add(DefaultSweepEvery / 2)
	_, err = runner.Run(context.Background(), "run-2")
	require.NoError(t, err)
	assert.Empty(t, namer.named)
}
