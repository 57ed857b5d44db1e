package disruptionrun

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/nodeclass"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/flows/termination"
)

// fakeLookup answers reservation lookups by id from states and counts the calls and ids asked.
type fakeLookup struct {
	mu     sync.Mutex
	states map[string]nodeclass.ReservationState
	err    error
	calls  [][]string
}

func (l *fakeLookup) Lookup(_ context.Context, ids []string) (map[string]nodeclass.ReservationState, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, slices.Clone(ids))
	if l.err != nil {
		return nil, l.err
	}
	out := map[string]nodeclass.ReservationState{}
	for _, id := range ids {
		if s, ok := l.states[id]; ok {
			out[id] = s
		} else {
			out[id] = nodeclass.ReservationState{ID: id}
		}
	}
	return out, nil
}

func (l *fakeLookup) callCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.calls)
}

// reservedNode adds node name (see fixture.node) running in reservation rid of type rtype: its claim and
// its registered Node say capacity type reserved and carry the reservation labels.
func (f *fixture) reservedNode(name, rid, rtype string, cpus ...string) {
	f.node(name, "medium", cpus...)
	c := f.store.claim("claim-" + name)
	c.CapacityType, c.PricePerHour = scheduling.CapacityTypeReserved, 0.2/10_000_000
	c.Labels = map[string]string{scheduling.LabelCapacityType: scheduling.CapacityTypeReserved,
		scheduling.LabelCapacityReservationID: rid, scheduling.LabelCapacityReservationType: rtype, "team": "ml"}
	f.store.setClaim(c)
	for i := range f.cluster.nodes {
		if n := &f.cluster.nodes[i]; n.Name == name {
			n.Labels[scheduling.LabelCapacityType] = scheduling.CapacityTypeReserved
			n.Labels[scheduling.LabelCapacityReservationID] = rid
			n.Labels[scheduling.LabelCapacityReservationType] = rtype
			n.Labels[scheduling.LabelNodeRegistered] = "true"
		}
	}
}

// resolved makes reservation rid one the classes' resolution found, ending at end.
func (f *fixture) resolved(rid, rtype string, end time.Time) {
	if f.launch.reservations == nil {
		f.launch.reservations = map[string]apis.CapacityReservationStatus{}
	}
	e := metav1.NewTime(end)
	f.launch.reservations[rid] = apis.CapacityReservationStatus{ID: rid, ReservationType: rtype, State: "active", EndTime: &e,
		AvailabilityZone: "us-west-2a", InstanceType: "medium"}
}

func (f *fixture) nodeLabels(name string) map[string]string {
	f.cluster.mu.Lock()
	defer f.cluster.mu.Unlock()
	for _, n := range f.cluster.nodes {
		if n.Name == name {
			return n.Labels
		}
	}
	return nil
}

func (f *fixture) sent() []termination.Request {
	f.terms.mu.Lock()
	defer f.terms.mu.Unlock()
	return slices.Clone(f.terms.sent)
}

// A capacity block's nodes drain from 40 minutes before its end (EC2 warns then and starts terminating
// the instances 10 minutes later): not at 41 minutes, at 40 and 39, and at once when the end has passed,
// each with EC2's reclaim time as the drain's deadline, a Warning Event on the Node and a decision record.
func TestCapacityBlockNodesDrainFortyMinutesBeforeTheEnd(t *testing.T) {
	for _, tc := range []struct {
		name   string
		before time.Duration // the block ends this long after the run
		drain  bool
	}{
		{name: "41 minutes before the end", before: 41 * time.Minute},
		{name: "40 minutes before the end", before: 40 * time.Minute, drain: true},
		{name: "39 minutes before the end", before: 39 * time.Minute, drain: true},
		{name: "an hour after the end", before: -time.Hour, drain: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, "0") // budgets allow nothing: a block's end does not ask them
			f.reservedNode("blk", "cr-block", "capacity-block", "1")
			f.node("other", "medium", "1")
			end := start.Add(tc.before)
			f.resolved("cr-block", "capacity-block", end)
			rep := f.run()

			if !tc.drain {
				assert.Empty(t, f.sent())
				assert.Zero(t, rep.BlockDrains)
				assert.Nil(t, f.store.claim("claim-blk").GoneBy)
				return
			}
			reclaim := end.Add(-30 * time.Minute)
			sent := f.sent()
			require.Len(t, sent, 1)
			assert.Equal(t, "claim-blk", sent[0].Claim)
			assert.Equal(t, ReasonCapacityBlockExpiring, sent[0].Reason)
			require.NotNil(t, sent[0].Deadline)
			assert.True(t, reclaim.Equal(*sent[0].Deadline), "deadline %s, want EC2's reclaim time %s", sent[0].Deadline, reclaim)
			assert.Equal(t, 1, rep.BlockDrains)
			assert.Equal(t, 1, rep.HandedOver["default/"+ReasonCapacityBlockExpiring])
			c := f.store.claim("claim-blk")
			require.NotNil(t, c.GoneBy)
			assert.True(t, reclaim.Equal(*c.GoneBy))
			assert.Equal(t, 1, c.TerminationSends)
			assert.Contains(t, f.events.reasons("blk"), kube.ReasonCapacityBlockExpiring)
			assert.Contains(t, f.store.kinds("node/blk"), KindCapacityBlockExpiring)
			assert.Contains(t, f.store.kinds("nodeclaim/claim-blk"), KindCapacityBlockExpiring)
			assert.Empty(t, f.cluster.labelled, "a block's node is drained, never relabelled")
		})
	}
}

// An ordinary reservation (an ODCR) ending soon drains nothing: its instances run on as on-demand.
func TestDefaultReservationEndingSoonIsNotDrained(t *testing.T) {
	f := newFixture(t, "0")
	f.reservedNode("odcr", "cr-odcr", "default", "1")
	f.resolved("cr-odcr", "default", start.Add(10*time.Minute))
	rep := f.run()
	assert.Empty(t, f.sent())
	assert.Zero(t, rep.BlockDrains)
	assert.Equal(t, scheduling.CapacityTypeReserved, f.store.claim("claim-odcr").CapacityType, "still active: still reserved")
}

// A block's node is handed over once: the runs that follow while the termination flow takes it send
// nothing, a request that seems lost (the claim still in service BlockResendAfter later) is sent again,
// and a claim draining is left to the termination flow.
func TestCapacityBlockHandOverIsIdempotent(t *testing.T) {
	f := newFixture(t, "0")
	f.reservedNode("blk", "cr-block", "capacity-block", "1")
	f.resolved("cr-block", "capacity-block", start.Add(35*time.Minute))
	f.runAs("run-1")
	require.Len(t, f.sent(), 1)

	f.clock.Advance(time.Minute)
	rep := f.runAs("run-2")
	assert.Len(t, f.sent(), 1, "handed over a minute ago: not again")
	assert.Zero(t, rep.BlockDrains)

	f.clock.Advance(BlockResendAfter)
	f.runAs("run-3")
	require.Len(t, f.sent(), 2, "still in service after BlockResendAfter: sent again")
	assert.Equal(t, 2, f.store.claim("claim-blk").TerminationSends)

	c := f.store.claim("claim-blk")
	c.Lifecycle = state.Draining
	f.store.setClaim(c)
	f.clock.Advance(BlockResendAfter)
	f.runAs("run-4")
	assert.Len(t, f.sent(), 2, "draining: the termination flow has it")
}

// A block's node handed over is not the engine's any more: though empty, no consolidation command takes
// it (it carries a GoneBy), and nothing else is disrupted in its place.
func TestCapacityBlockNodeIsNotConsolidated(t *testing.T) {
	f := newFixture(t, "100%")
	f.reservedNode("blk", "cr-block", "capacity-block")
	f.node("busy", "medium", "3")
	f.resolved("cr-block", "capacity-block", start.Add(30*time.Minute))
	rep := f.run()
	for _, cmd := range rep.Commands {
		for _, n := range cmd.Nodes {
			assert.NotEqual(t, "blk", n.Name, "command %s/%s took the block's node", cmd.Reason, cmd.Method)
		}
	}
	assert.Equal(t, map[string]string{"claim-blk": ReasonCapacityBlockExpiring}, f.terms.claims())
	assert.False(t, f.cluster.tainted("blk"), "the termination flow taints it, not a command")
}

// A reserved node whose ODCR expired (no class selects it, EC2 says expired) is demoted: its claim turns
// on-demand with the on-demand price and loses the reservation labels, its Node is relabelled as
// Karpenter does, with an Event and a decision record. The next run changes nothing.
func TestExpiredReservationDemotesClaimAndNode(t *testing.T) {
	f := newFixture(t, "0")
	f.reservedNode("odcr", "cr-odcr", "default", "1")
	lookup := &fakeLookup{states: map[string]nodeclass.ReservationState{
		"cr-odcr": {ID: "cr-odcr", Found: true, State: "expired", ReservationType: "default"}}}
	f.runner.deps.Reservations = lookup
	f.launch.onDemand = map[string]float64{"medium": 0.2}
	rep := f.run()

	assert.Equal(t, 1, rep.Demoted)
	assert.Equal(t, 1, rep.Relabelled)
	c := f.store.claim("claim-odcr")
	assert.Equal(t, scheduling.CapacityTypeOnDemand, c.CapacityType)
	assert.InDelta(t, 0.2, c.PricePerHour, 1e-9, "priced on demand now")
	assert.Equal(t, map[string]string{scheduling.LabelCapacityType: scheduling.CapacityTypeOnDemand, "team": "ml"}, c.Labels)
	assert.Empty(t, c.ReservationID)
	assert.Equal(t, state.Initialized, c.Lifecycle, "demotion is no disruption")

	labels := f.nodeLabels("odcr")
	assert.Equal(t, scheduling.CapacityTypeOnDemand, labels[scheduling.LabelCapacityType])
	assert.NotContains(t, labels, scheduling.LabelCapacityReservationID)
	assert.NotContains(t, labels, scheduling.LabelCapacityReservationType)
	assert.Contains(t, f.events.reasons("odcr"), kube.ReasonCapacityReservationEnded)
	assert.Contains(t, f.store.kinds("nodeclaim/claim-odcr"), KindCapacityReservationEnded)
	assert.Empty(t, f.sent(), "an ended ODCR drains nothing")

	version := f.store.claim("claim-odcr").Version
	f.clock.Advance(time.Minute)
	rep = f.runAs("run-2")
	assert.Zero(t, rep.Demoted+rep.Relabelled)
	assert.Equal(t, version, f.store.claim("claim-odcr").Version, "no second write")
	assert.Equal(t, []string{"odcr"}, f.cluster.labelled, "one Node write")
	assert.Equal(t, 1, lookup.callCount(), "the demoted claim names no reservation to look up again")
}

// A reservation EC2 no longer knows demotes its nodes too; one that is still active (only no longer
// selected: that is drift's business) does not; a failed lookup or no lookup at all decides nothing.
func TestDemotionNeedsAnAnswer(t *testing.T) {
	t.Run("not found", func(t *testing.T) {
		f := newFixture(t, "0")
		f.reservedNode("odcr", "cr-gone", "default", "1")
		f.runner.deps.Reservations = &fakeLookup{}
		f.run()
		assert.Equal(t, scheduling.CapacityTypeOnDemand, f.store.claim("claim-odcr").CapacityType)
		assert.Equal(t, scheduling.CapacityTypeOnDemand, f.nodeLabels("odcr")[scheduling.LabelCapacityType])
	})
	t.Run("still active", func(t *testing.T) {
		f := newFixture(t, "0")
		f.reservedNode("odcr", "cr-odcr", "default", "1")
		f.runner.deps.Reservations = &fakeLookup{states: map[string]nodeclass.ReservationState{
			"cr-odcr": {ID: "cr-odcr", Found: true, State: "active", ReservationType: "default"}}}
		f.run()
		assert.Equal(t, scheduling.CapacityTypeReserved, f.store.claim("claim-odcr").CapacityType)
		assert.Empty(t, f.cluster.labelled)
	})
	t.Run("the lookup fails", func(t *testing.T) {
		f := newFixture(t, "0")
		f.reservedNode("odcr", "cr-odcr", "default", "1")
		f.runner.deps.Reservations = &fakeLookup{err: errors.New("RequestLimitExceeded")}
		rep := f.run()
		assert.Equal(t, scheduling.CapacityTypeReserved, f.store.claim("claim-odcr").CapacityType)
		assert.Empty(t, f.cluster.labelled)
		assert.Contains(t, joinErrors(rep.Errors), "RequestLimitExceeded")
	})
	t.Run("no lookup wired", func(t *testing.T) {
		f := newFixture(t, "0")
		f.reservedNode("odcr", "cr-odcr", "default", "1")
		rep := f.run()
		assert.Equal(t, scheduling.CapacityTypeReserved, f.store.claim("claim-odcr").CapacityType)
		assert.Zero(t, rep.Demoted)
	})
}

// Only Nodewright's own nodes are touched: a Node without a claim record that says reserved (Karpenter's,
// or anyone's) keeps its labels, even when an ended reservation of ours has the same id; and an on-demand
// claim's Node that is not registered yet is left to registration.
func TestNodesThatAreNotOursAreLeftAlone(t *testing.T) {
	f := newFixture(t, "0")
	f.reservedNode("ours", "cr-odcr", "default", "1")
	f.reservedNode("theirs", "cr-odcr", "default", "1")
	delete(f.store.claims, "claim-theirs") // no claim record: not Nodewright's
	f.reservedNode("unregistered", "cr-other", "default", "1")
	u := f.store.claim("claim-unregistered")
	u.CapacityType, u.Labels = scheduling.CapacityTypeOnDemand, map[string]string{scheduling.LabelCapacityType: scheduling.CapacityTypeOnDemand}
	f.store.setClaim(u)
	for i := range f.cluster.nodes {
		if f.cluster.nodes[i].Name == "unregistered" {
			delete(f.cluster.nodes[i].Labels, scheduling.LabelNodeRegistered)
		}
	}
	f.runner.deps.Reservations = &fakeLookup{states: map[string]nodeclass.ReservationState{
		"cr-odcr": {ID: "cr-odcr", Found: true, State: "cancelled", ReservationType: "default"}}}
	f.run()

	assert.Equal(t, []string{"ours"}, f.cluster.labelled)
	assert.Equal(t, scheduling.CapacityTypeReserved, f.nodeLabels("theirs")[scheduling.LabelCapacityType])
	assert.Equal(t, "cr-odcr", f.nodeLabels("theirs")[scheduling.LabelCapacityReservationID])
	assert.Equal(t, scheduling.CapacityTypeReserved, f.nodeLabels("unregistered")[scheduling.LabelCapacityType])
}

// A Node registered after its claim was demoted, with the reserved labels it was launched with, is
// relabelled by the next run; its claim is not written again.
func TestNodeRegisteredAfterDemotionIsRelabelled(t *testing.T) {
	f := newFixture(t, "0")
	f.reservedNode("late", "cr-odcr", "default", "1")
	c := f.store.claim("claim-late")
	demoteClaim(&c, 0.2, true)
	f.store.setClaim(c)
	lookup := &fakeLookup{}
	f.runner.deps.Reservations = lookup
	rep := f.run()
	assert.Equal(t, 1, rep.Relabelled)
	assert.Zero(t, rep.Demoted)
	assert.Equal(t, scheduling.CapacityTypeOnDemand, f.nodeLabels("late")[scheduling.LabelCapacityType])
	assert.Zero(t, lookup.callCount(), "the claim names no reservation any more")
}

// Reservations are read without a call when the classes' resolutions know them; the others are looked
// up once per run, each id once however many nodes share it.
func TestReservationReadsAreBounded(t *testing.T) {
	f := newFixture(t, "0")
	f.reservedNode("a1", "cr-known", "default", "1")
	f.reservedNode("b1", "cr-unknown", "default", "1")
	f.reservedNode("b2", "cr-unknown", "default", "1")
	f.reservedNode("c1", "cr-other", "default", "1")
	f.resolved("cr-known", "default", start.Add(24*time.Hour))
	active := func(id string) nodeclass.ReservationState {
		return nodeclass.ReservationState{ID: id, Found: true, State: "active", ReservationType: "default"}
	}
	lookup := &fakeLookup{states: map[string]nodeclass.ReservationState{"cr-unknown": active("cr-unknown"), "cr-other": active("cr-other")}}
	f.runner.deps.Reservations = lookup
	f.run()
	require.Equal(t, 1, lookup.callCount(), "one lookup for the run")
	assert.Equal(t, []string{"cr-other", "cr-unknown"}, lookup.calls[0], "each unknown id once; the known one not at all")

	lookup.calls = nil
	f.launch.reservations = map[string]apis.CapacityReservationStatus{}
	for _, id := range []string{"cr-known", "cr-unknown", "cr-other"} {
		f.resolved(id, "default", start.Add(24*time.Hour))
	}
	f.clock.Advance(time.Minute)
	f.runAs("run-2")
	assert.Zero(t, lookup.callCount(), "every reservation resolved: no call")
}

// planReservationEnds leaves claims that are pending or on their way out, and claims whose reservation
// nothing is known of (named as unknown, sorted, once).
func TestPlanReservationEndsSkipsWhatItCannotJudge(t *testing.T) {
	now := start
	end := now.Add(10 * time.Minute)
	claim := func(name string, l state.Lifecycle, rid string) state.Claim {
		return state.Claim{Name: name, Lifecycle: l, CapacityType: scheduling.CapacityTypeReserved,
			Labels: map[string]string{scheduling.LabelCapacityReservationID: rid, scheduling.LabelCapacityReservationType: "capacity-block"}}
	}
	facts := map[string]reservationFact{"cr-b": {found: true, active: true, state: "active", rtype: "capacity-block", end: &end}}
	p := planReservationEnds([]state.Claim{
		claim("pending", state.Pending, "cr-b"),
		claim("draining", state.Draining, "cr-b"),
		claim("launched", state.Launched, "cr-b"),
		claim("x2", state.Initialized, "cr-z"),
		claim("x1", state.Initialized, "cr-y"),
		claim("x3", state.Initialized, "cr-z"),
	}, facts, now)
	require.Len(t, p.drains, 1)
	assert.Equal(t, "launched", p.drains[0].claim.Name, "a launched claim without a Node drains too (termination ends its instance)")
	assert.Equal(t, []string{"cr-y", "cr-z"}, p.unknown)
	assert.Empty(t, p.demotions)

	// A block EC2 no longer knows drains at once, typed by the claim's label.
	p = planReservationEnds([]state.Claim{claim("gone", state.Initialized, "cr-gone")}, map[string]reservationFact{"cr-gone": {}}, now)
	require.Len(t, p.drains, 1)
	assert.True(t, now.Equal(p.drains[0].goneBy))
	assert.Empty(t, p.demotions, "a block is drained, never demoted")
}

func joinErrors(errs []string) string {
	out := ""
	for _, e := range errs {
		out += e + "\n"
	}
	return out
}

// An on-demand node that matched an open ODCR keeps the reservation's id label; once a lookup found that
// reservation ended, a warm function does not ask again, and the node is left as it is.
func TestEndedReservationIsLookedUpOnce(t *testing.T) {
	f := newFixture(t, "0")
	f.node("open", "medium", "1")
	c := f.store.claim("claim-open")
	c.Labels = map[string]string{scheduling.LabelCapacityType: scheduling.CapacityTypeOnDemand, scheduling.LabelCapacityReservationID: "cr-open"}
	c.Consolidatable = &state.ConsolidatableMark{Since: start} // as a run before set it: nothing else to write
	f.store.setClaim(c)
	lookup := &fakeLookup{states: map[string]nodeclass.ReservationState{
		"cr-open": {ID: "cr-open", Found: true, State: "expired", ReservationType: "default"}}}
	f.runner.deps.Reservations = lookup
	f.runAs("run-1")
	f.clock.Advance(time.Minute)
	rep := f.runAs("run-2")
	assert.Equal(t, 1, lookup.callCount(), "an ended reservation is asked about once")
	assert.Zero(t, rep.Demoted+rep.Relabelled+rep.BlockDrains)
	assert.Equal(t, c.Version, f.store.claim("claim-open").Version, "an on-demand claim is not written")
}
