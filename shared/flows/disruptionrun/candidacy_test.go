package disruptionrun

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/core/disruption"
	"github.com/nodewright/nodewright/shared/flows/provisioning"
)

// count is how many Events of reason were published on the object named name.
func (f *fakeEvents) count(name string, reason kube.Reason) int {
	n := 0
	for _, r := range f.reasons(name) {
		if r == reason {
			n++
		}
	}
	return n
}

// message is the message of the last Event of reason on the object named name.
func (f *fakeEvents) message(name string, reason kube.Reason) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	msg := ""
	for _, e := range f.events {
		if e.Object.Name == name && e.Reason == reason {
			msg = e.Message
		}
	}
	return msg
}

// The nodes of an Underutilized command get a ConsolidationCandidate Event saying what consolidation
// means to do and what it saves, as Karpenter publishes when it computes a consolidation.
func TestUnderutilizedNodesAreAnnouncedAsCandidates(t *testing.T) {
	f := newFixture(t, "100%")
	f.node("n1", "medium", "1")
	f.node("n2", "medium", "1")
	f.node("n3", "medium", "1")
	rep := f.run()
	require.Len(t, rep.Commands, 1)
	require.Equal(t, disruption.ReasonUnderutilized, rep.Commands[0].Reason)
	for _, n := range []string{"n1", "n2", "n3"} {
		assert.Equal(t, 1, f.events.count(n, kube.ReasonConsolidationCandidate), n)
		msg := f.events.message(n, kube.ReasonConsolidationCandidate)
		assert.Contains(t, msg, "Consolidation candidate: replace node "+n)
		assert.Contains(t, msg, "one of 3 nodes")
		assert.Contains(t, msg, "saving $")
	}
}

// Empty nodes are removed without a ConsolidationCandidate Event, as Karpenter's emptiness publishes
// none.
func TestEmptyNodesAreNotAnnouncedAsCandidates(t *testing.T) {
	f := newFixture(t, "100%")
	f.node("busy", "large", "3")
	f.node("e1", "medium")
	rep := f.run()
	require.NotEmpty(t, rep.Commands)
	assert.Equal(t, disruption.ReasonEmpty, rep.Commands[0].Reason)
	assert.Zero(t, f.events.count("e1", kube.ReasonConsolidationCandidate))
}

// A command decided again and again (here its validation fails every run) announces its nodes once
// per candidacy, and again only after KeptEvery.
func TestCandidatesAreAnnouncedOncePerCandidacy(t *testing.T) {
	f := newFixture(t, "100%")
	f.node("n1", "medium", "1")
	f.node("n2", "medium", "1")
	f.runner.cfg.MaxCommands = 1
	pinValidation(f, "n1")
	for range 3 {
		rep := f.run()
		require.Empty(t, rep.Commands)
		require.Len(t, rep.Rejected, 1)
		f.clock.Advance(DefaultKeptEvery / 4)
	}
	assert.Equal(t, 1, f.events.count("n1", kube.ReasonConsolidationCandidate), "three runs within KeptEvery: one Event")
	assert.Equal(t, 1, f.events.count("n2", kube.ReasonConsolidationCandidate))
	assert.Equal(t, 3, f.events.count("n1", kube.ReasonConsolidationRejected), "each rejection is news")
	f.clock.Advance(DefaultKeptEvery)
	f.run()
	assert.Equal(t, 2, f.events.count("n1", kube.ReasonConsolidationCandidate), "announced again after KeptEvery")
}

// pinValidation makes every command's validation fail: each validation's read finds a pod that may not
// be disrupted on node, which is gone again by the next decision's read.
func pinValidation(f *fixture, node string) {
	f.cluster.onRead = func(c *fakeCluster, read int) {
		kept := c.pods[:0]
		for _, p := range c.pods {
			if p.Name != "late" {
				kept = append(kept, p)
			}
		}
		c.pods = kept
		if read%2 == 0 {
			p := c.pods[0].DeepCopy()
			p.Name, p.UID, p.Spec.NodeName = "late", "uid-late", node
			p.Annotations = map[string]string{disruption.AnnotationDoNotDisrupt: "true"}
			c.pods = append(c.pods, *p)
		}
	}
}

// An Underutilized command whose validation fails leaves ConsolidationRejected on its nodes, as
// Karpenter's consolidation does; an Empty command's failed validation stays DisruptionBlocked.
func TestFailedValidationOfAConsolidationIsRejected(t *testing.T) {
	t.Run("underutilized", func(t *testing.T) {
		f := newFixture(t, "100%")
		f.node("n1", "medium", "1")
		f.node("n2", "medium", "1")
		f.node("n3", "medium", "1")
		f.runner.cfg.MaxCommands = 1
		pinValidation(f, "n1")
		rep := f.run()
		assert.Empty(t, rep.Commands)
		require.Len(t, rep.Rejected, 1)
		for _, n := range []string{"n1", "n2", "n3"} {
			assert.Equal(t, 1, f.events.count(n, kube.ReasonConsolidationRejected), n)
			assert.Zero(t, f.events.count(n, kube.ReasonDisruptionBlocked), n)
		}
		msg := f.events.message("n1", kube.ReasonConsolidationRejected)
		assert.True(t, strings.HasPrefix(msg, "Consolidation rejected: replace of node n1"), msg)
		assert.Contains(t, msg, "validation")
	})
	t.Run("empty", func(t *testing.T) {
		f := newFixture(t, "100%")
		f.node("busy", "medium", "3")
		f.node("empty", "medium")
		f.cluster.onRead = func(c *fakeCluster, read int) {
			if read == 2 {
				p := c.pods[0].DeepCopy()
				p.Name, p.UID, p.Spec.NodeName = "late", "uid-late", "empty"
				c.pods = append(c.pods, *p)
			}
		}
		f.run()
		assert.Equal(t, 1, f.events.count("empty", kube.ReasonDisruptionBlocked))
		assert.Zero(t, f.events.count("empty", kube.ReasonConsolidationRejected))
	})
}

// A replacement whose launch finds no capacity anywhere gets InsufficientCapacityError on its NodeClaim,
// as Karpenter's launch publishes it for every NodeClaim; another launch failure does not.
func TestReplacementWithoutCapacityPublishesInsufficientCapacityError(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"no capacity", &provisioning.LaunchFailure{NodePool: "default", Reason: provisioning.NoCapacity, Err: provisioning.ErrNoCapacity}, 1},
		{"another failure", &provisioning.LaunchFailure{NodePool: "default", Reason: "UnauthorizedOperation", Err: errors.New("denied")}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, "100%")
			f.node("n1", "medium", "1")
			f.node("n2", "medium", "1")
			f.runner.cfg.MaxCommands = 1
			f.launch.launchErr = tc.err
			f.run()
			c := f.store.command()
			require.Len(t, c.Replacements, 1)
			assert.Equal(t, tc.want, f.events.count(c.Replacements[0], kube.ReasonInsufficientCapacityError))
			if tc.want > 0 {
				assert.Contains(t, f.events.message(c.Replacements[0], kube.ReasonInsufficientCapacityError), "found no capacity")
			}
		})
	}
}
