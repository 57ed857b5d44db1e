package disruptionrun

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/mirror"
)

// claimReasons are the reasons of the Events published on claim's NodeClaim mirror (nodewright.sh, no
// UID: the function's mirror.ClaimEvents fills it in).
func (f *fakeEvents) claimReasons(claim string) []kube.Reason {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []kube.Reason
	for _, e := range f.events {
		if e.Object.APIVersion == mirror.APIVersion && e.Object.Kind == mirror.NodeClaims.Kind && e.Object.Name == claim {
			out = append(out, e.Reason)
		}
	}
	return out
}

// progressReasons are claimReasons without Unconsolidatable (a candidate's node is kept, "already being
// disrupted", by the runs that follow its command).
func (f *fakeEvents) progressReasons(claim string) []kube.Reason {
	var out []kube.Reason
	for _, r := range f.claimReasons(claim) {
		if r != kube.ReasonUnconsolidatable {
			out = append(out, r)
		}
	}
	return out
}

// As Karpenter publishes its disruption Events on the Node and on its NodeClaim, a replace command's
// claims get DisruptionLaunching and DisruptionWaitingReadiness on their NodeClaim mirrors when the
// replacement is launched, DisruptionWaitingReadiness while it initializes, and DisruptionTerminating when
// they are handed to termination.
func TestDisruptionProgressIsPublishedOnTheNodeClaimMirrors(t *testing.T) {
	f := newFixture(t, "100%")
	f.node("n1", "medium", "1")
	f.node("n2", "medium", "1")
	f.node("n3", "medium", "1")
	rep := f.run()
	require.Len(t, rep.Commands, 1)
	claims := []string{"claim-n1", "claim-n2", "claim-n3"}
	for _, c := range claims {
		assert.Equal(t, []kube.Reason{kube.ReasonDisruptionLaunching, kube.ReasonDisruptionWaitingReadiness}, f.events.progressReasons(c), c)
	}
	assert.Equal(t, 6, rep.ClaimEvents)

	c := f.store.command()
	rep = f.run()
	assert.Equal(t, 3, rep.ClaimEvents, "still waiting: one DisruptionWaitingReadiness each")
	f.initialize(c.Replacements[0])
	f.run()
	for _, c := range claims {
		assert.Equal(t, []kube.Reason{kube.ReasonDisruptionLaunching, kube.ReasonDisruptionWaitingReadiness,
			kube.ReasonDisruptionWaitingReadiness, kube.ReasonDisruptionTerminating}, f.events.progressReasons(c), c)
	}
	for _, e := range f.events.events {
		if e.Object.Kind == mirror.NodeClaims.Kind {
			assert.Equal(t, types.UID(""), e.Object.UID, "the publisher (mirror.ClaimEvents) gives the UID")
		}
	}
}

// A candidate the budget ledger refuses gets DisruptionBlocked on its NodeClaim mirror as on its Node.
func TestARefusedCandidateIsBlockedOnItsNodeClaimMirror(t *testing.T) {
	f := newFixture(t, "2")
	f.node("busy", "large", "7")
	f.node("e1", "medium")
	f.node("e2", "medium")
	require.NoError(t, f.store.ReserveDisruption(context.Background(), "default", "claim-elsewhere", 2))
	f.run()
	assert.Contains(t, f.events.reasons("e1"), kube.ReasonDisruptionBlocked)
	assert.Contains(t, f.events.claimReasons("claim-e1"), kube.ReasonDisruptionBlocked)
}

// A run publishes at most MaxClaimEvents Events on NodeClaim mirrors; its Nodes still get theirs, and a
// claim without a name gets none.
func TestNodeClaimEventsAreBoundedPerRun(t *testing.T) {
	events := &fakeEvents{}
	r := &Runner{deps: Deps{Events: events}}
	var rep Report
	for i := range MaxClaimEvents + 10 {
		r.publishOnNodeAndClaim(context.Background(), fmt.Sprintf("node-%d", i), fmt.Sprintf("claim-%d", i),
			kube.Event{Reason: kube.ReasonDisruptionTerminating, Message: "m"}, &rep)
	}
	r.publishOnClaim(context.Background(), "", kube.Event{Reason: kube.ReasonDisruptionBlocked}, &rep)
	claimEvents, nodeEvents := 0, 0
	for _, e := range events.events {
		switch e.Object.Kind {
		case mirror.NodeClaims.Kind:
			claimEvents++
		case "Node":
			nodeEvents++
		}
	}
	assert.Equal(t, MaxClaimEvents, claimEvents)
	assert.Equal(t, MaxClaimEvents, rep.ClaimEvents)
	assert.Equal(t, MaxClaimEvents+10, nodeEvents)
}

// As Karpenter publishes Unconsolidatable on the Node and on its NodeClaim, a kept node's claim gets it on
// its NodeClaim mirror too, with the same message, once per reason (KeptEvery), at most MaxClaimEvents a
// run apart from the disruption progress Events.
func TestUnconsolidatableIsPublishedOnTheNodeClaimMirrorToo(t *testing.T) {
	f := newFixture(t, "100%")
	f.node("busy", "large", "3")
	f.node("pinned", "medium")
	p := f.pod("precious", "pinned", "100m")
	p.Annotations = map[string]string{"karpenter.sh/do-not-disrupt": "true"}
	rep := f.run()
	assert.Equal(t, []kube.Reason{kube.ReasonUnconsolidatable}, f.events.claimReasons("claim-pinned"))
	assert.Positive(t, rep.UnconsolidatableClaimEvents)
	var onNode, onClaim string
	for _, e := range f.events.events {
		if e.Reason != kube.ReasonUnconsolidatable {
			continue
		}
		switch e.Object.Name {
		case "pinned":
			onNode = e.Message
		case "claim-pinned":
			onClaim = e.Message
		}
	}
	assert.NotEmpty(t, onClaim)
	assert.Equal(t, onNode, onClaim, "the same message on both")

	f.run()
	assert.Len(t, f.events.claimReasons("claim-pinned"), 1, "the same reason again is not news")

	g := newFixture(t, "0") // no command: every node is kept
	for i := range MaxClaimEvents + 5 {
		g.node(fmt.Sprintf("n%03d", i), "medium", "1")
	}
	rep = g.run()
	assert.Equal(t, MaxClaimEvents, rep.UnconsolidatableClaimEvents, "bounded per run")
}
