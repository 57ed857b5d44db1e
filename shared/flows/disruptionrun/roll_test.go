package disruptionrun

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/disruption"
	"github.com/nodewright/nodewright/shared/core/drift"
)

func amiDrift() drift.Result {
	return drift.Result{Verdict: drift.Drifted, Reason: drift.AMIDrift, Reasons: []drift.Reason{drift.AMIDrift},
		Details: map[string]string{"oldImageId": "ami-old", "newImageId": "ami-new"}}
}

// A drifted node is recorded (condition, event, decision) and replaced first: its replacement launches,
// nothing is drained until it initializes, then the node goes with reason Drifted.
func TestDriftedNodeIsRecordedAndReplacedFirst(t *testing.T) {
	f := newFixture(t, "100%")
	f.node("old", "medium", "3")
	f.node("busy", "medium", "3")
	f.launch.setDrift("claim-old", amiDrift())
	f.runner.cfg.MaxCommands = 1 // consolidating busy afterwards is another test's
	rep := f.run()

	cond := f.store.claim("claim-old").Drifted
	require.NotNil(t, cond, "the Drifted condition is recorded on the claim")
	assert.Equal(t, "AMIDrift", cond.Reason)
	assert.Equal(t, "ami-new", cond.Details["newImageId"])
	assert.Equal(t, start, cond.Since)
	assert.Nil(t, f.store.claim("claim-busy").Drifted)
	assert.Contains(t, f.events.reasons("old"), kube.ReasonDrifted)
	assert.Contains(t, f.store.kinds("node/old"), KindDrifted)
	assert.Contains(t, f.store.kinds("nodeclaim/claim-old"), KindDrifted)
	assert.Equal(t, map[string]int{"default/AMIDrift": 1}, rep.Drifted)

	require.Len(t, rep.Commands, 1)
	cmd := rep.Commands[0]
	assert.Equal(t, disruption.ReasonDrifted, cmd.Reason)
	assert.Equal(t, disruption.ActionReplace, cmd.Action)
	assert.Contains(t, cmd.Why, "ami-new")
	assert.Empty(t, f.terms.claims(), "nothing drains before the replacement is up")
	c := f.store.command()
	require.Len(t, c.Replacements, 1)

	// A second run finds the same condition: it is not rewritten (its Since stays).
	f.clock.Advance(time.Minute)
	f.run()
	assert.Equal(t, start, f.store.claim("claim-old").Drifted.Since)

	f.initialize(c.Replacements[0])
	f.run()
	assert.Equal(t, map[string]string{"claim-old": "Drifted"}, f.terms.claims())
}

// A claim that no longer drifts has its condition cleared; one that cannot be judged (the resolution
// failed) keeps it, and nothing is rolled on it this run.
func TestDriftConditionClearedWhenNotDriftedAndKeptWhenUndecided(t *testing.T) {
	f := newFixture(t, "0") // budget 0: nothing graceful happens, only the records are under test
	f.node("a", "medium", "3")
	f.node("b", "medium", "3")
	since := start.Add(-time.Hour)
	for _, n := range []string{"claim-a", "claim-b"} {
		c := f.store.claim(n)
		c.Drifted = &state.DriftCondition{Reason: "AMIDrift", Since: since}
		f.store.setClaim(c)
	}
	f.launch.setDrift("claim-b", drift.Result{Verdict: drift.Undecided, Undecided: map[drift.Reason]string{drift.AMIDrift: "resolving failed"}})
	rep := f.run()
	assert.Nil(t, f.store.claim("claim-a").Drifted, "NotDrifted clears the condition")
	assert.Contains(t, f.store.kinds("node/a"), KindDrifted)
	require.NotNil(t, f.store.claim("claim-b").Drifted, "Undecided leaves it")
	assert.Equal(t, since, f.store.claim("claim-b").Drifted.Since)
	assert.Empty(t, rep.Drifted)
	assert.Empty(t, rep.Commands)
}

// Drift is judged at the run's time: InstanceTypeNotFound waits until a claim is an hour old.
func TestDriftIsJudgedAtTheRunsTime(t *testing.T) {
	f := newFixture(t, "0")
	f.node("a", "medium", "1")
	f.run()
	assert.Equal(t, start, f.launch.observed["claim-a"].Now)
}

// The node that drifted first is rolled first, whatever its name.
func TestOldestDriftedNodeIsRolledFirst(t *testing.T) {
	f := newFixture(t, "100%")
	f.node("a", "medium", "1")
	f.node("b", "medium", "1")
	f.node("busy", "large", "1")
	f.launch.setDrift("claim-a", amiDrift())
	f.launch.setDrift("claim-b", amiDrift())
	c := f.store.claim("claim-b")
	c.Drifted = &state.DriftCondition{Reason: "AMIDrift", Details: amiDrift().Details, Since: start.Add(-time.Hour)}
	f.store.setClaim(c)
	f.runner.cfg.MaxCommands = 1
	rep := f.run()

	require.Len(t, rep.Commands, 1, "%+v", rep)
	assert.Equal(t, disruption.ReasonDrifted, rep.Commands[0].Reason)
	require.Len(t, rep.Commands[0].Nodes, 1)
	assert.Equal(t, "b", rep.Commands[0].Nodes[0].Name, "b drifted an hour before a")
	assert.Equal(t, start, f.store.claim("claim-a").Drifted.Since)
}

// A hash-version change re-stamps the claim's hashes; it is not drift.
func TestHashVersionChangeRestampsTheClaim(t *testing.T) {
	f := newFixture(t, "0")
	f.node("a", "medium", "3")
	f.launch.setDrift("claim-a", drift.Result{Verdict: drift.NotDrifted,
		Restamp: &drift.Restamp{TemplateHash: "new-hash", TemplateHashVersion: "v9"}})
	rep := f.run()
	c := f.store.claim("claim-a")
	assert.Equal(t, "new-hash", c.TemplateHash)
	assert.Equal(t, "v9", c.TemplateHashVersion)
	assert.Nil(t, c.Drifted)
	assert.Equal(t, 1, rep.Restamped)
	assert.Empty(t, rep.Commands)
}

// An expired node goes whatever the budget says (here 0), replacement first; the ledger still records
// it, so graceful disruptions count it.
func TestExpiredNodeIsReplacedFirstDespiteAZeroBudget(t *testing.T) {
	f := newFixture(t, "0")
	f.node("old", "medium", "3")
	f.node("busy", "medium", "3")
	c := f.store.claim("claim-old")
	c.ExpireAfter = "30m0s" // created an hour ago
	f.store.setClaim(c)
	rep := f.run()

	assert.Equal(t, map[string]int{"default": 1}, rep.Expired)
	require.Len(t, rep.Commands, 1)
	cmd := rep.Commands[0]
	assert.Equal(t, disruption.ReasonExpired, cmd.Reason)
	assert.Equal(t, disruption.MethodForceful, cmd.Method)
	assert.Equal(t, disruption.ActionReplace, cmd.Action)
	assert.Empty(t, f.terms.claims())
	assert.Equal(t, 1, f.store.inFlight("default"))
	rec := f.store.command()
	f.initialize(rec.Replacements[0])
	f.run()
	assert.Equal(t, map[string]string{"claim-old": "Expired"}, f.terms.claims())
}

// An operator's request disrupts the node with reason Manual; a requested claim without a Node goes
// straight to termination.
func TestOperatorRequestDisruptsTheNodeAndAClaimWithoutNode(t *testing.T) {
	f := newFixture(t, "0")
	f.node("asked", "medium")
	c := f.store.claim("claim-asked")
	c.DisruptionRequest = &state.DisruptionRequest{Reason: "kernel CVE", RequestedAt: start}
	f.store.setClaim(c)
	f.store.setClaim(state.Claim{Name: "claim-pending", NodePool: "default", Lifecycle: state.Launched, CreatedAt: start,
		DisruptionRequest: &state.DisruptionRequest{RequestedAt: start}})
	f.launch.prepareErr = nil
	rep := f.run()

	require.Len(t, rep.Commands, 1)
	assert.Equal(t, disruption.ReasonManual, rep.Commands[0].Reason)
	assert.Contains(t, rep.Commands[0].Why, "kernel CVE")
	assert.Equal(t, map[string]string{"claim-asked": "Manual", "claim-pending": "Manual"}, f.terms.claims())
	assert.Contains(t, f.store.kinds("nodeclaim/claim-pending"), KindDisrupt)
}

// Nothing is judged or written on an incomplete snapshot.
func TestNoDriftRecordedOnAnIncompleteSnapshot(t *testing.T) {
	f := newFixture(t, "100%")
	f.node("old", "medium", "3")
	f.launch.setDrift("claim-old", amiDrift())
	f.launch.prepareErr = errors.New("catalog unavailable")
	rep := f.run()
	assert.NotEmpty(t, rep.Skipped)
	assert.Nil(t, f.store.claim("claim-old").Drifted)
	assert.Empty(t, rep.Commands)
}

// Re-stamping is bounded per run; the next run does the rest.
func TestRestampsAreBoundedPerRun(t *testing.T) {
	f := newFixture(t, "0")
	for i := 0; i < MaxRestampsPerRun+5; i++ {
		name := "n" + strconv.Itoa(i)
		f.node(name, "medium", "3")
		f.launch.setDrift("claim-"+name, drift.Result{Verdict: drift.NotDrifted,
			Restamp: &drift.Restamp{TemplateHash: "h", TemplateHashVersion: "v9"}})
	}
	rep := f.run()
	assert.Equal(t, MaxRestampsPerRun, rep.Restamped)
}
