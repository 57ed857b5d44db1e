package disruptionrun

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/disruption"
)

// An empty node is tainted, reserved on the ledger, recorded and handed to termination at once (a
// delete needs no replacement).
func TestEmptyNodeIsTaintedAndHandedToTermination(t *testing.T) {
	f := newFixture(t, "100%")
	f.node("busy", "medium", "3")
	f.node("empty", "medium")
	f.runner.cfg.MaxCommands = 1 // the next command (busy onto a cheaper spot node) is another test's
	rep := f.run()

	require.Len(t, rep.Commands, 1)
	assert.Equal(t, disruption.ReasonEmpty, rep.Commands[0].Reason)
	assert.True(t, f.cluster.tainted("empty"))
	assert.False(t, f.cluster.tainted("busy"))
	assert.Equal(t, map[string]string{"claim-empty": "Empty"}, f.terms.claims())
	assert.Equal(t, 1, f.store.inFlight("default"), "the disrupted node holds a ledger slot until it is gone")
	c := f.store.command()
	assert.Equal(t, state.CommandTerminating, c.Phase)
	assert.Equal(t, []state.DisruptedClaim{{Claim: "claim-empty", Node: "empty", NodePool: "default"}}, c.Candidates)
	assert.Contains(t, f.store.kinds("node/empty"), KindDisrupt)
	assert.Contains(t, f.store.kinds("nodeclaim/claim-empty"), KindDisrupt)
	assert.Contains(t, f.events.reasons("empty"), kube.ReasonDisruptionTerminating)

	// Once the termination flow has removed it, the command finishes and the slot is free.
	f.gone("empty")
	rep = f.run()
	assert.Contains(t, rep.Advanced, c.ID+": done")
	assert.Equal(t, state.CommandDone, f.store.command().Phase)
	assert.Zero(t, f.store.inFlight("default"))
}

// Three underused on-demand nodes are replaced by one cheaper node: the replacement claim (marked as
// replacing them) is launched first, nothing is sent to termination until it initializes, then every
// disrupted claim is.
func TestReplacementIsLaunchedBeforeAnyTermination(t *testing.T) {
	f := newFixture(t, "100%")
	f.node("n1", "medium", "1")
	f.node("n2", "medium", "1")
	f.node("n3", "medium", "1")
	var recordedAtTaint []string
	f.cluster.onTaint = func(string) {
		if recordedAtTaint != nil {
			return
		}
		recordedAtTaint = []string{}
		claims, _ := f.store.ListClaims(context.Background())
		for _, c := range claims {
			if len(c.Replaces) > 0 {
				recordedAtTaint = append(recordedAtTaint, c.Name)
			}
		}
	}
	rep := f.run()

	require.Len(t, rep.Commands, 1)
	cmd := rep.Commands[0]
	assert.Len(t, recordedAtTaint, 1, "the replacement claim is recorded (in flight for the provisioner) before any node is tainted")
	assert.Equal(t, disruption.ActionReplace, cmd.Action)
	require.Len(t, f.launch.launched, 1)
	c := f.store.command()
	require.Len(t, c.Replacements, 1)
	repl := f.store.claim(c.Replacements[0])
	assert.ElementsMatch(t, []string{"claim-n1", "claim-n2", "claim-n3"}, repl.Replaces, "marked as a replacement for the churn guard")
	assert.Less(t, repl.PricePerHour, 0.60)
	for _, n := range []string{"n1", "n2", "n3"} {
		assert.True(t, f.cluster.tainted(n), n)
		assert.Contains(t, f.events.reasons(n), kube.ReasonDisruptionLaunching)
		assert.Contains(t, f.events.reasons(n), kube.ReasonDisruptionWaitingReadiness)
	}
	assert.Empty(t, f.terms.claims(), "nothing is drained before the replacement is ready")
	assert.Equal(t, state.CommandLaunching, c.Phase)
	assert.Equal(t, 3, f.store.inFlight("default"))

	f.clock.Advance(time.Minute)
	rep = f.run()
	assert.Empty(t, f.terms.claims(), "still launching")
	assert.Contains(t, rep.Advanced, c.ID+": waiting for "+c.Replacements[0]+" (launched)")
	assert.Empty(t, rep.Commands, "the tainted nodes are disrupting: nothing more to do")

	f.initialize(c.Replacements[0])
	f.run()
	assert.Equal(t, map[string]string{"claim-n1": "Underutilized", "claim-n2": "Underutilized", "claim-n3": "Underutilized"}, f.terms.claims())
	assert.Equal(t, state.CommandTerminating, f.store.command().Phase)
}

// A replacement that does not initialize within ReplacementTimeout rolls the command back: taints
// lifted, the replacement handed to termination, the ledger released, the reason recorded.
func TestReplacementTimeoutRollsBack(t *testing.T) {
	f := newFixture(t, "100%")
	f.node("n1", "medium", "1")
	f.node("n2", "medium", "1")
	f.node("n3", "medium", "1")
	f.run()
	c := f.store.command()
	require.Equal(t, state.CommandLaunching, c.Phase)

	f.clock.Advance(DefaultReplacementTimeout + time.Minute)
	f.runner.cfg.MaxCommands = 1
	f.launch.prepareErr = errors.New("stop after advancing") // only the rollback is under test here
	rep := f.run()
	got := f.store.command()
	if got.ID != c.ID {
		got = f.store.commands[c.ID]
	}
	assert.Equal(t, state.CommandRolledBack, got.Phase)
	assert.Contains(t, got.Outcome, "did not initialize within 10m0s")
	assert.Contains(t, rep.Advanced[0], "rolled back")
	for _, n := range []string{"n1", "n2", "n3"} {
		assert.False(t, f.cluster.tainted(n), n)
		assert.Contains(t, f.store.kinds("node/"+n), KindDisruptionRolledBack)
	}
	assert.Equal(t, map[string]string{c.Replacements[0]: ReasonRolledBack}, f.terms.claims())
	assert.Zero(t, f.store.inFlight("default"))
}

// A replacement whose launch fails outright rolls the command back in the same run; one that was
// removed after its launch rolls it back in the next.
func TestFailedReplacementRollsBack(t *testing.T) {
	t.Run("launch fails", func(t *testing.T) {
		f := newFixture(t, "100%")
		f.node("n1", "medium", "1")
		f.node("n2", "medium", "1")
		f.runner.cfg.MaxCommands = 1
		f.launch.launchErr = errors.New("InsufficientInstanceCapacity everywhere")
		rep := f.run()
		assert.Empty(t, rep.Commands)
		c := f.store.command()
		assert.Equal(t, state.CommandRolledBack, c.Phase)
		assert.Contains(t, c.Outcome, "InsufficientInstanceCapacity")
		assert.False(t, f.cluster.tainted("n1"))
		assert.False(t, f.cluster.tainted("n2"))
		assert.Zero(t, f.store.inFlight("default"))
		for claim, reason := range f.terms.claims() {
			assert.Equal(t, ReasonRolledBack, reason, "only the replacement is handed to termination: %s", claim)
		}
	})
	t.Run("replacement removed", func(t *testing.T) {
		f := newFixture(t, "100%")
		f.node("n1", "medium", "1")
		f.node("n2", "medium", "1")
		f.runner.cfg.MaxCommands = 1
		f.run()
		c := f.store.command()
		require.Equal(t, state.CommandLaunching, c.Phase)
		repl := f.store.claim(c.Replacements[0])
		repl.Lifecycle = state.Deleted
		f.store.setClaim(repl)
		f.launch.prepareErr = errors.New("stop after advancing")
		f.run()
		assert.Equal(t, state.CommandRolledBack, f.store.commands[c.ID].Phase)
		assert.Contains(t, f.store.commands[c.ID].Outcome, "failed to launch or was removed")
		assert.False(t, f.cluster.tainted("n1"))
		assert.Zero(t, f.store.inFlight("default"))
	})
}

// When the ledger refuses a reservation (another run took the budget), the command is dropped: what it
// reserved is released, nothing is tainted, the refusal is recorded.
func TestBudgetRefusalDropsTheCommand(t *testing.T) {
	f := newFixture(t, "2")
	f.node("busy", "large", "7")
	f.node("e1", "medium")
	f.node("e2", "medium")
	// Another (overlapping) run holds one of the two slots for a node this snapshot does not show as
	// disrupting yet: the engine allows 2, the ledger only 1 more.
	require.NoError(t, f.store.ReserveDisruption(context.Background(), "default", "claim-elsewhere", 2))
	rep := f.run()
	assert.Empty(t, rep.Commands)
	require.NotEmpty(t, rep.Rejected)
	assert.Contains(t, rep.Rejected[0], "budget ledger")
	assert.Equal(t, 1, f.store.inFlight("default"), "the slot the dropped command took was released")
	assert.False(t, f.cluster.tainted("e1"))
	assert.False(t, f.cluster.tainted("e2"))
	assert.Empty(t, f.terms.claims())
	assert.Contains(t, f.store.kinds("node/e1"), KindDisruptionRejected)
	assert.Contains(t, f.events.reasons("e1"), kube.ReasonDisruptionBlocked)
}

// Two executions overlapping on the same budget (a lease that expired mid-run) never take more than
// it allows: the ledger's conditional write decides.
func TestOverlappingExecutionsNeverExceedTheBudget(t *testing.T) {
	f := newFixture(t, "1")
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"} {
		f.node(n, "medium")
	}
	w := f.runner.read(context.Background(), nil, nil)
	require.Empty(t, w.input.Incomplete)
	var wg sync.WaitGroup
	var mu sync.Mutex
	executed := 0
	for i, n := range []string{"a", "b", "c", "d"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := disruption.Command{Reason: disruption.ReasonEmpty, Method: disruption.MethodEmpty, Action: disruption.ActionDelete,
				Nodes: []disruption.CommandNode{{Name: n, Claim: "claim-" + n, NodePool: "default"}}}
			var rep Report
			if f.runner.execute(context.Background(), "run-"+string(rune('0'+i)), cmd, w, &rep) {
				mu.Lock()
				executed++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, 1, executed, "a budget of 1 node of 10")
	assert.Equal(t, 1, f.store.inFlight("default"))
	assert.Len(t, f.terms.claims(), 1)
}

func TestLeaseHeldReturnsAtOnce(t *testing.T) {
	f := newFixture(t, "100%")
	f.node("empty", "medium")
	f.store.leaseHeld = true
	rep, err := f.runner.Run(context.Background(), "run")
	require.NoError(t, err)
	assert.False(t, rep.Lease)
	assert.Zero(t, f.cluster.reads, "nothing is read")
	assert.False(t, f.cluster.tainted("empty"))
}

// Whatever cannot be read, nothing is decided and the report says why. The cluster is read whole once
// per run (a failure there fails the run, as before); a later read that fails (here the validation's)
// rejects the command.
func TestIncompleteDataDecidesNothing(t *testing.T) {
	for name, breakIt := range map[string]func(f *fixture){
		"catalog":   func(f *fixture) { f.launch.prepareErr = errors.New("DescribeInstanceTypes: throttled") },
		"NodePools": func(f *fixture) { f.store.configErr = errors.New("table unavailable") },
		"cluster": func(f *fixture) {
			f.cluster.onRead = func(c *fakeCluster, read int) {
				if read > 1 {
					c.err = errors.New("pods: the server is currently unable to handle the request")
				}
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, "100%")
			f.node("empty", "medium")
			breakIt(f)
			rep := f.run()
			assert.Empty(t, rep.Commands)
			said := rep.Skipped + strings.Join(rep.Rejected, "; ")
			assert.Contains(t, said, "incomplete")
			assert.Contains(t, said, name)
			assert.False(t, f.cluster.tainted("empty"))
			assert.Empty(t, f.terms.claims())
			assert.Zero(t, f.store.inFlight("default"))
		})
	}
}

// A pod that lands on the empty node between the decision and its validation drops the command; the
// failure is recorded and nothing is done.
func TestValidationFailureIsRecordedAndNothingIsDone(t *testing.T) {
	f := newFixture(t, "100%")
	f.node("busy", "medium", "3")
	f.node("empty", "medium")
	f.cluster.onRead = func(c *fakeCluster, read int) {
		if read == 2 { // the run's read (advance and the decision), then the validation's
			p := c.pods[0].DeepCopy()
			p.Name, p.UID, p.Spec.NodeName = "late", "uid-late", "empty"
			c.pods = append(c.pods, *p)
		}
	}
	rep := f.run()
	assert.Empty(t, rep.Commands)
	require.Len(t, rep.Rejected, 1)
	assert.Contains(t, rep.Rejected[0], "validation")
	assert.False(t, f.cluster.tainted("empty"))
	assert.Empty(t, f.terms.claims())
	assert.Zero(t, f.store.inFlight("default"))
	assert.Contains(t, f.store.kinds("node/empty"), KindDisruptionRejected)
}

// A do-not-disrupt pod keeps its node, and says so.
func TestDoNotDisruptPodBlocks(t *testing.T) {
	f := newFixture(t, "100%")
	f.node("busy", "large", "3")
	f.node("pinned", "medium")
	p := f.pod("precious", "pinned", "100m")
	p.Annotations = map[string]string{disruption.AnnotationDoNotDisrupt: "true"}
	rep := f.run()
	for _, c := range rep.Commands {
		assert.NotContains(t, nodeNames(c), "pinned")
	}
	assert.False(t, f.cluster.tainted("pinned"))
	assert.Contains(t, f.store.kinds("node/pinned"), KindUnconsolidatable, "explain node/pinned answers why not")
	assert.Contains(t, f.events.reasons("pinned"), kube.ReasonUnconsolidatable)
}

// do-not-disrupt with a duration protects the pod for that long after it started; a value that is
// neither "true" nor a duration protects nothing and is reported on the pod with Karpenter's
// InvalidDoNotDisruptAnnotation Event.
func TestDoNotDisruptDurationAndInvalidValues(t *testing.T) {
	t.Run("a duration not over yet blocks", func(t *testing.T) {
		f := newFixture(t, "100%")
		f.node("busy", "large", "3")
		f.node("pinned", "medium")
		p := f.pod("precious", "pinned", "100m")
		p.Annotations = map[string]string{disruption.AnnotationDoNotDisrupt: "30m"}
		started := metav1.NewTime(start.Add(-10 * time.Minute))
		p.Status.StartTime = &started
		rep := f.run()
		for _, c := range rep.Commands {
			assert.NotContains(t, nodeNames(c), "pinned")
		}
		assert.False(t, f.cluster.tainted("pinned"))
		assert.Equal(t, []kube.Reason{kube.ReasonDoNotDisruptUntil}, f.events.reasons("precious"), "the pod is told until when")
	})
	t.Run("a typo protects nothing and says so", func(t *testing.T) {
		f := newFixture(t, "100%")
		f.node("busy", "large", "3")
		f.node("pinned", "medium")
		p := f.pod("precious", "pinned", "100m")
		p.Annotations = map[string]string{disruption.AnnotationDoNotDisrupt: "ture"}
		f.run()
		assert.Contains(t, f.events.reasons("precious"), kube.ReasonInvalidDoNotDisruptAnnotation)
		assert.True(t, f.cluster.tainted("pinned"), "the node is consolidated")
	})
}

// A karpenter.sh/disrupted taint no command holds, on a node whose claim is in service, is lifted (a
// run that crashed between its taint and its record); a draining claim's taint is left alone.
func TestStaleDisruptedTaintIsLifted(t *testing.T) {
	f := newFixture(t, "100%")
	f.node("stale", "medium", "3")
	f.node("draining", "medium", "3")
	c := f.store.claim("claim-draining")
	c.Lifecycle = state.Draining
	f.store.setClaim(c)
	for _, n := range []string{"stale", "draining"} {
		require.NoError(t, f.cluster.Taint(context.Background(), n, apis.DisruptedNoScheduleTaint))
	}
	f.launch.prepareErr = errors.New("stop after advancing")
	rep := f.run()
	assert.Equal(t, []string{"stale"}, rep.TaintsLifted)
	assert.False(t, f.cluster.tainted("stale"))
	assert.True(t, f.cluster.tainted("draining"))
	assert.Contains(t, f.store.kinds("node/stale"), KindTaintLifted)
}

// A kept node is recorded once, and again only when its reason changes or KeptEvery passes.
func TestKeptNodesAreRecordedSparingly(t *testing.T) {
	f := newFixture(t, "100%")
	f.node("pinned", "medium")
	p := f.pod("precious", "pinned", "100m")
	p.Annotations = map[string]string{disruption.AnnotationDoNotDisrupt: "true"}
	count := func() int { return len(f.store.kinds("node/pinned")) }
	f.run()
	require.Equal(t, 1, count())
	f.clock.Advance(time.Minute)
	f.run()
	assert.Equal(t, 1, count(), "same reason a minute later: not written again")
	f.clock.Advance(DefaultKeptEvery)
	f.run()
	assert.Equal(t, 2, count(), "written again after KeptEvery")
}

// A node launched as a replacement is the churn guard's: its claim's Replaces sets ReplacementLaunchedAt.
func TestReplacementNodesCarryTheirLaunchTime(t *testing.T) {
	f := newFixture(t, "100%")
	f.node("r", "medium", "1")
	c := f.store.claim("claim-r")
	c.Replaces = []string{"claim-old"}
	f.store.setClaim(c)
	w := f.runner.read(context.Background(), nil, nil)
	require.Empty(t, w.input.Incomplete)
	require.Len(t, w.input.Nodes, 1)
	assert.Equal(t, *c.LaunchedAt, w.input.Nodes[0].ReplacementLaunchedAt)
	assert.Equal(t, 0.20, w.input.Nodes[0].Price)
	assert.Equal(t, "claim-r", w.input.Nodes[0].Claim)
}

// consolidateAfter counts from the claim's initialization, which the lifecycle stamps on the claim:
// the engine gets it with the node (and the launch time, which stands in when it is missing).
func TestNodesCarryTheirClaimsInitializationTime(t *testing.T) {
	f := newFixture(t, "100%")
	f.node("n", "medium", "1")
	f.node("old", "medium", "1")
	c := f.store.claim("claim-old")
	c.InitializedAt = nil // a claim initialized before the time was recorded
	f.store.setClaim(c)
	w := f.runner.read(context.Background(), nil, nil)
	require.Empty(t, w.input.Incomplete)
	require.Len(t, w.input.Nodes, 2)
	byName := map[string]disruption.Node{}
	for _, n := range w.input.Nodes {
		byName[n.Name()] = n
	}
	claim := f.store.claim("claim-n")
	require.NotNil(t, claim.InitializedAt)
	assert.Equal(t, *claim.InitializedAt, byName["n"].InitializedAt)
	assert.Equal(t, *claim.LaunchedAt, byName["n"].LaunchedAt)
	assert.True(t, byName["old"].InitializedAt.IsZero())
	assert.Equal(t, *c.LaunchedAt, byName["old"].LaunchedAt)
}

// A pod leaving a node is dated by the run that first sees it gone; a node seen for the first time (a
// cold start cannot know what left it before) counts as changed then, never as quiet since its pods came.
func TestPodRemovalIsDatedByTheRunThatSeesIt(t *testing.T) {
	f := newFixture(t, "100%")
	f.node("n", "medium", "1", "1")
	w := f.runner.read(context.Background(), nil, nil)
	assert.Equal(t, f.clock.Now(), w.input.Nodes[0].LastPodEvent, "first sight")
	f.clock.Advance(time.Minute)
	w = f.runner.read(context.Background(), nil, nil)
	assert.Equal(t, start, w.input.Nodes[0].LastPodEvent, "nothing changed since first sight")
	f.clock.Advance(time.Minute)
	f.cluster.pods = f.cluster.pods[:1]
	w = f.runner.read(context.Background(), nil, nil)
	assert.Equal(t, start.Add(2*time.Minute), w.input.Nodes[0].LastPodEvent)
}

// A NodePool whose budgets allow nothing says so on the NodePool, and its nodes are kept.
func TestZeroBudgetBlocksAndSaysSo(t *testing.T) {
	f := newFixture(t, "0")
	f.node("empty", "medium")
	rep := f.run()
	assert.Empty(t, rep.Commands)
	assert.Contains(t, f.events.reasons("default"), kube.ReasonDisruptionBlocked)
	assert.Equal(t, 0, rep.Allowed["default"][disruption.ReasonEmpty])
	assert.Equal(t, map[string]int{"default": 1}, rep.BudgetBlocked, "a candidate only the budget keeps")
	assert.Contains(t, f.store.kinds("node/empty"), KindUnconsolidatable)
}

// The engine's search is bounded by the time left before the deadline, less a validation and an
// execution: with too little left, the run decides nothing rather than act after its deadline.
func TestNearTheDeadlineNothingIsDecided(t *testing.T) {
	f := newFixture(t, "100%")
	f.node("empty", "medium")
	ctx, cancel := context.WithDeadline(context.Background(), f.clock.Now().Add(DefaultCommandMargin/2))
	defer cancel()
	rep, err := f.runner.Run(ctx, "run")
	require.NoError(t, err)
	assert.Contains(t, rep.Skipped, "deadline")
	assert.False(t, f.cluster.tainted("empty"))
}

// A handed-over claim the termination flow never starts draining (its request lost) is sent again, and
// given up after a while: its slot released, its taint lifted, the command finished saying so.
func TestLostTerminationRequestIsResentThenGivenUp(t *testing.T) {
	f := newFixture(t, "100%")
	f.node("empty", "medium")
	f.runner.cfg.MaxCommands = 1
	f.run()
	c := f.store.command()
	require.Equal(t, state.CommandTerminating, c.Phase)
	require.Len(t, f.terms.sent, 1)
	f.launch.prepareErr = errors.New("stop after advancing")

	f.clock.Advance(time.Minute)
	f.run()
	assert.Len(t, f.terms.sent, 1, "the termination flow has time to start")
	f.clock.Advance(2 * time.Minute)
	f.run()
	assert.Len(t, f.terms.sent, 2, "sent again")
	assert.True(t, f.cluster.tainted("empty"))

	f.clock.Advance(30 * time.Minute)
	f.run()
	got := f.store.commands[c.ID]
	assert.Equal(t, state.CommandDone, got.Phase)
	assert.Contains(t, got.Outcome, "never started draining claim-empty")
	assert.False(t, f.cluster.tainted("empty"))
	assert.Zero(t, f.store.inFlight("default"))
}

// A reservation no command holds (a run crashed between reserving and recording) is released once it is
// older than any run; a young one, or one of a draining claim, is left.
func TestOrphanedReservationsAreReleased(t *testing.T) {
	f := newFixture(t, "100%")
	f.node("busy", "large", "7")
	f.node("draining", "large", "7")
	c := f.store.claim("claim-draining")
	c.Lifecycle = state.Draining
	f.store.setClaim(c)
	ctx := context.Background()
	require.NoError(t, f.store.ReserveDisruption(ctx, "default", "claim-busy", 10))
	require.NoError(t, f.store.ReserveDisruption(ctx, "default", "claim-draining", 10))
	f.launch.prepareErr = errors.New("stop after advancing")
	f.run()
	assert.Equal(t, 2, f.store.inFlight("default"), "too young to be an orphan")
	f.clock.Advance(orphanGrace + time.Second)
	rep := f.run()
	assert.Equal(t, 1, f.store.inFlight("default"), "the draining claim keeps its slot until termination releases it")
	assert.Contains(t, rep.Advanced, "released the orphaned budget slot of claim-busy in default")
}

// A rollback lifts only the taints that are still its own: a node whose claim another flow started
// draining after the command tainted it (an interruption, the lifecycle) keeps its taint.
func TestRollbackLeavesTheTaintOfANodeAnotherFlowDrains(t *testing.T) {
	f := newFixture(t, "100%")
	f.node("n1", "medium", "1")
	f.node("n2", "medium", "1")
	f.runner.cfg.MaxCommands = 1
	f.launch.launchErr = errors.New("InsufficientInstanceCapacity everywhere")
	f.cluster.onTaint = func(node string) {
		if node != "n1" {
			return
		}
		// An interruption notice arrives while the command taints: the termination flow drains n1.
		c := f.store.claim("claim-n1")
		c.Lifecycle = state.Draining
		f.store.setClaim(c)
	}
	f.run()
	require.Equal(t, state.CommandRolledBack, f.store.command().Phase)
	assert.True(t, f.cluster.tainted("n1"), "the draining node keeps its taint")
	assert.False(t, f.cluster.tainted("n2"), "the node still in service is untainted")
}
