package e2e

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/disruption"
	"github.com/nodewright/nodewright/shared/flows/disruptionrun"
)

// An empty Nodewright node is tainted karpenter.sh/disrupted and handed to the termination queue; its
// ledger slot is held until the termination flow removes it.
func TestEmptyNodeIsTaintedAndHandedToTermination(t *testing.T) {
	w := newWorld(t, "100%")
	busy := w.node("busy", "m5.large", "2", nil, "1500m")
	empty := w.node("empty", "m5.large", "2", nil)
	rep, err := w.runner("", nil).Run(w.ctx, "run-1")
	require.NoError(t, err)
	require.True(t, rep.Lease)
	require.Empty(t, rep.Skipped)
	require.Len(t, rep.Commands, 1, "errors: %v", rep.Errors)
	assert.Equal(t, disruption.ReasonEmpty, rep.Commands[0].Reason)
	assert.True(t, w.tainted(empty))
	assert.False(t, w.tainted(busy))
	assert.Equal(t, map[string]string{"claim-" + empty: "Empty"}, w.terminationRequests())
	n, err := w.store.DisruptionsInFlight(w.ctx, "default")
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	ds, err := w.store.Decisions(w.ctx, "node/"+empty, 10)
	require.NoError(t, err)
	require.NotEmpty(t, ds, "explain node/NAME finds the decision")
	kinds := []string{}
	for _, d := range ds {
		kinds = append(kinds, d.Kind)
	}
	assert.Contains(t, kinds, disruptionrun.KindDisrupt)
}

// Two underused on-demand nodes are replaced by one cheaper node: the replacement claim is recorded and
// launched in EC2 (moto) and the nodes are tainted, but nothing is sent to termination until the
// replacement has initialized.
func TestUnderusedPairIsReplacedCheaperBeforeAnyTermination(t *testing.T) {
	w := newWorld(t, "100%")
	a := w.node("a", "m5.xlarge", "4", nil, "500m")
	b := w.node("b", "m5.xlarge", "4", nil, "500m")
	r := w.runner("", nil)
	rep, err := r.Run(w.ctx, "run-1")
	require.NoError(t, err)
	require.Len(t, rep.Commands, 1, "errors: %v, rejected: %v", rep.Errors, rep.Rejected)
	cmd := rep.Commands[0]
	assert.Equal(t, disruption.ActionReplace, cmd.Action)
	assert.ElementsMatch(t, []string{a, b}, []string{cmd.Nodes[0].Name, cmd.Nodes[1].Name})
	assert.Positive(t, cmd.SavingsPerHour)
	assert.True(t, w.tainted(a))
	assert.True(t, w.tainted(b))
	assert.Empty(t, w.terminationRequests(), "no drain before the replacement is ready")

	commands, err := w.store.ListDisruptionCommands(w.ctx)
	require.NoError(t, err)
	require.Len(t, commands, 1)
	c := commands[0]
	assert.Equal(t, state.CommandLaunching, c.Phase)
	require.Len(t, c.Replacements, 1)
	repl, err := w.store.GetClaim(w.ctx, c.Replacements[0])
	require.NoError(t, err)
	assert.Equal(t, state.Launched, repl.Lifecycle)
	assert.ElementsMatch(t, []string{"claim-" + a, "claim-" + b}, repl.Replaces)
	assert.Less(t, repl.PricePerHour, 2*w.price("m5.xlarge", "on-demand"), "cheaper than what it replaces")
	assert.True(t, w.claimedInstances()[repl.Name], "the replacement's instance runs, tagged with its claim")

	// A provisioning run now sees the disrupted nodes' pods as pending, and the replacement in flight
	// for them: it launches nothing of its own.
	prov, err := w.prov.Run(w.ctx, "provisioner-run")
	require.NoError(t, err)
	assert.Equal(t, 2, prov.PendingPods, "the tainted nodes' pods are reschedulable")
	assert.Equal(t, 1, prov.InFlight)
	assert.Empty(t, prov.Claims, "the replacement absorbs them: nothing launched twice")

	// The replacement joins and initializes (the lifecycle function's work): the next run hands both
	// nodes to the termination flow.
	_, err = w.store.UpdateClaim(w.ctx, repl.Name, func(cl *state.Claim) error {
		cl.Lifecycle, cl.NodeName = state.Registered, "replacement"
		return nil
	})
	require.NoError(t, err)
	_, err = w.store.UpdateClaim(w.ctx, repl.Name, func(cl *state.Claim) error { cl.Lifecycle = state.Initialized; return nil })
	require.NoError(t, err)
	rep, err = r.Run(w.ctx, "run-2")
	require.NoError(t, err)
	assert.Contains(t, rep.Advanced, c.ID+": terminating")
	assert.Equal(t, map[string]string{"claim-" + a: "Underutilized", "claim-" + b: "Underutilized"}, w.terminationRequests())
}

// A pod annotated karpenter.sh/do-not-disrupt keeps its node; `explain node/NAME` says why.
func TestDoNotDisruptPodBlocks(t *testing.T) {
	w := newWorld(t, "100%")
	pinned := w.node("pinned", "m5.large", "2", nil)
	w.pod("precious", pinned, "100m", map[string]string{disruption.AnnotationDoNotDisrupt: "true"})
	rep, err := w.runner("", nil).Run(w.ctx, "run-1")
	require.NoError(t, err)
	assert.Empty(t, rep.Commands)
	assert.False(t, w.tainted(pinned))
	assert.Empty(t, w.terminationRequests())
	ds, err := w.store.Decisions(w.ctx, "node/"+pinned, 10)
	require.NoError(t, err)
	require.NotEmpty(t, ds)
	assert.Equal(t, disruptionrun.KindUnconsolidatable, ds[0].Kind)
	assert.Contains(t, ds[0].Message, "do-not-disrupt")
}

// leaseFree lets overlapping runs each take a lease of their own, as when a run outlives its lease.
type leaseFree struct{ *state.Store }

func (s leaseFree) AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (state.Lease, error) {
	return s.Store.AcquireLease(ctx, name+"-"+holder, holder, ttl)
}

// Two runs overlap (the lease expired under the first) and see the cluster differently (one read before
// the other's taint): each decides to delete one empty node under a budget of one. The ledger's
// conditional write lets exactly one of them through.
func TestOverlappingRunsNeverExceedTheBudget(t *testing.T) {
	w := newWorld(t, "1")
	nodes := []string{
		w.node("e1", "m5.large", "2", nil),
		w.node("e2", "m5.large", "2", map[string]string{"view": "b"}),
		w.node("e3", "m5.large", "2", map[string]string{"view": "b"}),
	}
	store := leaseFree{w.store}
	runs := []*disruptionrun.Runner{w.runner("", store), w.runner("view=b", store)}
	reports := make([]disruptionrun.Report, 2)
	var wg sync.WaitGroup
	for i, r := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			reports[i], err = r.Run(w.ctx, "overlap-"+string(rune('a'+i)))
			assert.NoError(t, err)
		}()
	}
	wg.Wait()
	executed, tainted := 0, 0
	for _, rep := range reports {
		executed += len(rep.Commands)
	}
	for _, n := range nodes {
		if w.tainted(n) {
			tainted++
		}
	}
	inFlight, err := w.store.DisruptionsInFlight(w.ctx, "default")
	require.NoError(t, err)
	assert.Equal(t, 1, inFlight, "the ledger holds one reservation")
	assert.Equal(t, 1, tainted, "one node disrupted: reports %+v", reports)
	assert.Len(t, w.terminationRequests(), 1)
	if executed == 2 {
		// Both decided the same node (the same view): allowed, the reservation is idempotent.
		assert.Equal(t, reports[0].Commands[0].Nodes, reports[1].Commands[0].Nodes)
	}
	rejected := strings.Join(append(reports[0].Rejected, reports[1].Rejected...), " ")
	t.Logf("executed %d command(s); rejected: %s", executed, rejected)
	if executed == 1 {
		assert.Contains(t, rejected, "budget ledger")
	}
}

// A replacement that is removed before it initializes (its launch failed) rolls the command back: the
// taints are lifted in the API server, nothing is drained, the ledger is released.
func TestFailedReplacementRollsBack(t *testing.T) {
	w := newWorld(t, "100%")
	a := w.node("a", "m5.xlarge", "4", nil, "500m")
	b := w.node("b", "m5.xlarge", "4", nil, "500m")
	r := w.runner("", nil)
	rep, err := r.Run(w.ctx, "run-1")
	require.NoError(t, err)
	require.Len(t, rep.Commands, 1)
	commands, err := w.store.ListDisruptionCommands(w.ctx)
	require.NoError(t, err)
	require.Len(t, commands, 1)
	repl := commands[0].Replacements[0]
	_, err = w.store.UpdateClaim(w.ctx, repl, func(c *state.Claim) error { c.Lifecycle = state.Deleted; return nil })
	require.NoError(t, err)

	// A run too close to its deadline to decide anything new only advances what is in progress.
	short, cancel := context.WithTimeout(w.ctx, 10*time.Second)
	defer cancel()
	rep, err = r.Run(short, "run-2")
	require.NoError(t, err)
	require.NotEmpty(t, rep.Advanced)
	assert.Contains(t, rep.Advanced[0], "rolled back")
	assert.Empty(t, rep.Commands)
	assert.False(t, w.tainted(a))
	assert.False(t, w.tainted(b))
	assert.Empty(t, w.terminationRequests(), "the old nodes stay; the replacement is already gone")
	n, err := w.store.DisruptionsInFlight(w.ctx, "default")
	require.NoError(t, err)
	assert.Zero(t, n, "the rolled-back command's reservations are released")
	commands, err = w.store.ListDisruptionCommands(w.ctx)
	require.NoError(t, err)
	var rolled *state.DisruptionCommand
	for i := range commands {
		if commands[i].ID == "run-1-1" {
			rolled = &commands[i]
		}
	}
	require.NotNil(t, rolled)
	assert.Equal(t, state.CommandRolledBack, rolled.Phase)
	assert.Contains(t, rolled.Outcome, repl)
}

// A PodDisruptionBudget that allows no disruption keeps the node of the pod it covers.
func TestPDBBlocks(t *testing.T) {
	w := newWorld(t, "100%")
	guarded := w.node("guarded", "m5.large", "2", nil)
	w.pod("db", guarded, "100m", nil)
	p, err := w.client.CoreV1().Pods(w.ns).Get(w.ctx, "db", metav1.GetOptions{})
	require.NoError(t, err)
	p.Labels = map[string]string{"app": "db"}
	_, err = w.client.CoreV1().Pods(w.ns).Update(w.ctx, p, metav1.UpdateOptions{})
	require.NoError(t, err)
	one := intstr.FromInt32(1)
	_, err = w.client.PolicyV1().PodDisruptionBudgets(w.ns).Create(w.ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "db"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &one,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}}}, metav1.CreateOptions{})
	require.NoError(t, err) // no disruption controller runs here: its status allows 0 disruptions

	rep, err := w.runner("", nil).Run(w.ctx, "run-1")
	require.NoError(t, err)
	assert.Empty(t, rep.Commands)
	assert.False(t, w.tainted(guarded))
	ds, err := w.store.Decisions(w.ctx, "node/"+guarded, 10)
	require.NoError(t, err)
	require.NotEmpty(t, ds)
	assert.Equal(t, disruptionrun.KindUnconsolidatable, ds[0].Kind)
	assert.Contains(t, ds[0].Message, "PodDisruptionBudget "+w.ns+"/db allows no disruption")
}
