package e2e

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/disruption"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/flows/disruptionrun"
)

// rollOnly stores budgets that stop consolidation (Underutilized and Empty: 0) and allow drifted nodes
// to roll one at a time.
func rollOnly(np *apis.NodePool, _ *apis.EC2NodeClass) {
	np.Spec.Disruption.Budgets = []apis.Budget{
		{Nodes: "0", Reasons: []apis.DisruptionReason{apis.DisruptionReasonUnderutilized, apis.DisruptionReasonEmpty}},
		{Nodes: "1", Reasons: []apis.DisruptionReason{apis.DisruptionReasonDrifted}}}
}

// events lists the reasons of the Events published on node (Node events live in "default").
func (w *world) events(node string) []string {
	w.t.Helper()
	list, err := w.client.CoreV1().Events(metav1.NamespaceDefault).List(w.ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + node})
	require.NoError(w.t, err)
	var out []string
	for _, e := range list.Items {
		out = append(out, e.Reason)
	}
	return out
}

// decisionKinds lists the kinds of the decisions recorded under subject, newest first.
func (w *world) decisionKinds(subject string) []string {
	w.t.Helper()
	ds, err := w.store.Decisions(w.ctx, subject, 20)
	require.NoError(w.t, err)
	var out []string
	for _, d := range ds {
		out = append(out, d.Kind)
	}
	return out
}

// replacementOf returns the only in-flight command and its only replacement claim, after checking the
// replacement was recorded and launched in EC2 (moto) for claim.
func (w *world) replacementOf(claim string) (state.DisruptionCommand, state.Claim) {
	w.t.Helper()
	commands, err := w.store.ListDisruptionCommands(w.ctx)
	require.NoError(w.t, err)
	require.Len(w.t, commands, 1)
	c := commands[0]
	assert.Equal(w.t, state.CommandLaunching, c.Phase)
	require.Len(w.t, c.Replacements, 1)
	repl := w.claim(c.Replacements[0])
	assert.Equal(w.t, state.Launched, repl.Lifecycle)
	assert.Equal(w.t, []string{claim}, repl.Replaces)
	assert.True(w.t, w.claimedInstances()[repl.Name], "the replacement's instance runs in EC2, tagged with its claim")
	return c, repl
}

// A newer image matching the EC2NodeClass's AMI selector drifts the nodes launched with the older one:
// the run records AMIDrift (condition, Event, decision), launches a replacement for one node (the
// Drifted budget allows one) and drains nothing; once the replacement initializes the next run hands the
// drifted claim to termination with reason Drifted.
func TestAMIDriftIsRecordedAndRolledReplacementFirst(t *testing.T) {
	w := newWorld(t, "100%")
	w.apply(rollOnly)
	old := w.node("old", "m5.large", "2", nil, "1500m")
	other := w.node("other", "m5.large", "2", nil, "1500m")
	for _, n := range []string{old, other} {
		require.Equal(t, w.golden, w.claim("claim-"+n).ImageID, "launched with the world's image, the newest the selector matches")
	}
	r := w.runner("", nil)

	// Launched with what the configuration says now: nothing has drifted.
	rep, err := r.Run(w.ctx, "run-0")
	require.NoError(t, err)
	require.Empty(t, rep.Skipped)
	assert.Empty(t, rep.Drifted)
	assert.Empty(t, rep.Commands)
	assert.Nil(t, w.claim("claim-"+old).Drifted)
	assert.Zero(t, rep.Restamped, "the stamped hashes are current")

	time.Sleep(1100 * time.Millisecond) // moto dates images to the second
	newer := w.publishImage("golden-next-" + w.ns)
	rep, err = r.Run(w.ctx, "run-1")
	require.NoError(t, err)
	require.Empty(t, rep.Skipped)
	assert.Equal(t, map[string]int{"default/AMIDrift": 2}, rep.Drifted)
	for _, n := range []string{old, other} {
		cond := w.claim("claim-" + n).Drifted
		require.NotNil(t, cond, "claim-%s is marked drifted", n)
		assert.Equal(t, "AMIDrift", cond.Reason)
		assert.Equal(t, map[string]string{"oldImageId": w.golden, "newImageId": newer}, cond.Details)
		assert.WithinDuration(t, time.Now(), cond.Since, time.Minute)
		assert.Contains(t, w.events(n), string(kube.ReasonDrifted))
		assert.Contains(t, w.decisionKinds("node/"+n), disruptionrun.KindDrifted)
		assert.Contains(t, w.decisionKinds("nodeclaim/claim-"+n), disruptionrun.KindDrifted)
	}
	require.Len(t, rep.Commands, 1, "errors: %v, rejected: %v", rep.Errors, rep.Rejected)
	cmd := rep.Commands[0]
	assert.Equal(t, disruption.ReasonDrifted, cmd.Reason)
	assert.Equal(t, disruption.MethodDrift, cmd.Method)
	assert.Equal(t, disruption.ActionReplace, cmd.Action)
	require.Len(t, cmd.Nodes, 1)
	assert.Equal(t, old, cmd.Nodes[0].Name, "equal cost: the first by name")
	assert.True(t, w.tainted(old))
	assert.False(t, w.tainted(other))
	assert.Empty(t, w.terminationRequests(), "nothing drains before the replacement is up")

	// The replacement's launch stamps what drift compares: the new image, the current hashes and
	// versions, its subnet and groups, its instance type's labels.
	c, repl := w.replacementOf("claim-" + old)
	_, npHash, _, ncHash := w.stored()
	assert.Equal(t, newer, repl.ImageID)
	assert.Equal(t, npHash, repl.TemplateHash)
	assert.Equal(t, apis.NodePoolHashVersion, repl.TemplateHashVersion)
	assert.Equal(t, ncHash, repl.NodeClassHash)
	assert.Equal(t, apis.EC2NodeClassHashVersion, repl.NodeClassHashVersion)
	assert.NotEmpty(t, repl.SubnetID)
	assert.Equal(t, w.claim("claim-"+old).SecurityGroupIDs, repl.SecurityGroupIDs)
	assert.Equal(t, repl.InstanceType, repl.Labels[scheduling.LabelInstanceType])
	assert.Equal(t, "amd64", repl.Labels[scheduling.LabelArch])
	assert.NotEmpty(t, repl.Labels["karpenter.k8s.aws/instance-category"])
	assert.Equal(t, "720h0m0s", repl.ExpireAfter)

	// Not initialized yet: still nothing drains, and the budget's one slot is taken.
	rep, err = r.Run(w.ctx, "run-2")
	require.NoError(t, err)
	assert.Empty(t, rep.Commands)
	assert.Empty(t, w.terminationRequests())
	assert.False(t, w.tainted(other))

	// The replacement joins with a Node: the next run judges it (launched with the new image, it has not
	// drifted) and hands the drifted claim to termination.
	joined := w.join(repl.Name)
	rep, err = r.Run(w.ctx, "run-3")
	require.NoError(t, err)
	assert.Contains(t, rep.Advanced, c.ID+": terminating")
	assert.Equal(t, map[string]string{"claim-" + old: "Drifted"}, w.terminationRequests())
	assert.False(t, w.tainted(other), "the budget's slot is held until the termination flow removes the node")
	assert.False(t, w.tainted(joined))
	assert.Nil(t, w.claim(repl.Name).Drifted, "what the launch stamped is what drift compares")
	assert.Zero(t, rep.Restamped)
	assert.Equal(t, map[string]int{"default/AMIDrift": 2}, rep.Drifted,
		"the nodes on the old image (the rolled one stays until the termination flow removes it), not the replacement")
}

// A label added to the stored NodePool's template drifts every node of the pool (NodePoolDrifted); a
// Drifted budget of one node lets one command through per run even when the run may execute more, and
// the replacement launches before anything drains.
func TestNodePoolDriftRollsWithinTheBudget(t *testing.T) {
	w := newWorld(t, "100%")
	w.apply(rollOnly)
	a := w.node("a", "m5.large", "2", nil, "1500m")
	b := w.node("b", "m5.large", "2", nil, "1500m")
	stamped := w.claim("claim-" + a).TemplateHash

	w.apply(func(np *apis.NodePool, _ *apis.EC2NodeClass) {
		np.Spec.Template.ObjectMeta.Labels = map[string]string{"tier": "gold"}
	})
	_, newHash, _, _ := w.stored()
	require.NotEqual(t, stamped, newHash)
	w.maxCommands = 3 // the budget, not the runner's cap, holds the second node back
	r := w.runner("", nil)
	rep, err := r.Run(w.ctx, "run-1")
	require.NoError(t, err)
	require.Empty(t, rep.Skipped)
	assert.Equal(t, map[string]int{"default/NodePoolDrifted": 2}, rep.Drifted)
	for _, n := range []string{a, b} {
		cond := w.claim("claim-" + n).Drifted
		require.NotNil(t, cond)
		assert.Equal(t, "NodePoolDrifted", cond.Reason)
		assert.Equal(t, map[string]string{"oldTemplateHash": stamped, "newTemplateHash": newHash}, cond.Details)
	}
	require.Len(t, rep.Commands, 1, "one Drifted slot, one command: errors %v, rejected %v", rep.Errors, rep.Rejected)
	cmd := rep.Commands[0]
	assert.Equal(t, disruption.ReasonDrifted, cmd.Reason)
	assert.Equal(t, disruption.ActionReplace, cmd.Action)
	require.Len(t, cmd.Nodes, 1)
	rolled, kept := cmd.Nodes[0].Name, b
	if rolled == b {
		kept = a
	}
	assert.True(t, w.tainted(rolled))
	assert.False(t, w.tainted(kept))
	assert.Equal(t, 1, rep.BudgetBlocked["default"], "the other drifted node is held back by the budget")
	assert.Empty(t, w.terminationRequests())
	c, repl := w.replacementOf("claim-" + rolled)
	assert.Equal(t, "gold", repl.Labels["tier"], "the replacement is launched from the template as it is now")
	assert.Equal(t, newHash, repl.TemplateHash)
	n, err := w.store.DisruptionsInFlight(w.ctx, "default")
	require.NoError(t, err)
	assert.Equal(t, 1, n)

	rep, err = r.Run(w.ctx, "run-2")
	require.NoError(t, err)
	assert.Empty(t, rep.Commands, "the slot is still taken")
	assert.False(t, w.tainted(kept))
	assert.Empty(t, w.terminationRequests())

	joined := w.join(repl.Name)
	rep, err = r.Run(w.ctx, "run-3")
	require.NoError(t, err)
	assert.Contains(t, rep.Advanced, c.ID+": terminating")
	assert.Equal(t, map[string]string{"claim-" + rolled: "Drifted"}, w.terminationRequests())
	assert.Nil(t, w.claim(repl.Name).Drifted, "the replacement is launched from the template as it is now")
	assert.False(t, w.tainted(joined))
	assert.False(t, w.tainted(kept), "the slot is held until the termination flow removes the rolled node")
}

// A claim whose NodePool hash was computed with another hash version is re-stamped, not drifted.
func TestHashVersionChangeRestampsNotDrift(t *testing.T) {
	w := newWorld(t, "100%")
	w.apply(rollOnly)
	a := w.node("a", "m5.large", "2", nil, "1500m")
	current := w.claim("claim-" + a).TemplateHash
	_, err := w.store.UpdateClaim(w.ctx, "claim-"+a, func(c *state.Claim) error {
		c.TemplateHash, c.TemplateHashVersion = "hash-of-another-version", "v0"
		return nil
	})
	require.NoError(t, err)
	rep, err := w.runner("", nil).Run(w.ctx, "run-1")
	require.NoError(t, err)
	require.Empty(t, rep.Skipped)
	c := w.claim("claim-" + a)
	assert.Equal(t, apis.NodePoolHashVersion, c.TemplateHashVersion)
	assert.Equal(t, current, c.TemplateHash)
	assert.Nil(t, c.Drifted)
	assert.Equal(t, 1, rep.Restamped)
	assert.Empty(t, rep.Drifted)
	assert.Empty(t, rep.Commands)
	assert.NotContains(t, w.decisionKinds("node/"+a), disruptionrun.KindDrifted)
	assert.False(t, w.tainted(a))
}

// When the EC2NodeClass's AMI selector matches nothing (AMIsReady false), AMI drift cannot be decided: a
// Drifted condition set earlier stays as it is and nothing is rolled on it. The run still judges what it
// can: another claim's hash of an old version is re-stamped.
func TestFailedResolutionKeepsTheDriftConditionAndRollsNothing(t *testing.T) {
	w := newWorld(t, "100%")
	w.apply(rollOnly)
	a := w.node("a", "m5.large", "2", nil, "1500m")
	b := w.node("b", "m5.large", "2", nil, "1500m")
	current := w.claim("claim-" + b).TemplateHash
	_, err := w.store.UpdateClaim(w.ctx, "claim-"+b, func(c *state.Claim) error { c.TemplateHashVersion = "v0"; return nil })
	require.NoError(t, err)
	since := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	earlier := &state.DriftCondition{Reason: "AMIDrift", Details: map[string]string{"oldImageId": w.golden, "newImageId": "ami-12345678"}, Since: since}
	_, err = w.store.UpdateClaim(w.ctx, "claim-"+a, func(c *state.Claim) error { c.Drifted = earlier; return nil })
	require.NoError(t, err)
	w.apply(func(_ *apis.NodePool, nc *apis.EC2NodeClass) {
		nc.Spec.AMISelectorTerms = []apis.AMISelectorTerm{{Tags: map[string]string{"team": "nobody-" + w.ns}}}
	})
	res, err := w.classes.Resolve(w.ctx, func() *apis.EC2NodeClass { _, _, nc, _ := w.stored(); return nc }(), "1.34")
	require.NoError(t, err)
	assert.Empty(t, res.Status.AMIs, "the selector matches no image")

	rep, err := w.runner("", nil).Run(w.ctx, "run-1")
	require.NoError(t, err)
	require.Empty(t, rep.Skipped, "errors: %v", rep.Errors)
	assert.Equal(t, 1, rep.Restamped, "claims were judged this run")
	assert.Equal(t, apis.NodePoolHashVersion, w.claim("claim-"+b).TemplateHashVersion)
	assert.Equal(t, current, w.claim("claim-"+b).TemplateHash)
	assert.Nil(t, w.claim("claim-"+b).Drifted)
	c := w.claim("claim-" + a)
	require.NotNil(t, c.Drifted, "an undecided run leaves the condition")
	assert.Equal(t, earlier.Reason, c.Drifted.Reason)
	assert.Equal(t, earlier.Details, c.Drifted.Details)
	assert.True(t, since.Equal(c.Drifted.Since), "since %v, got %v", since, c.Drifted.Since)
	assert.Empty(t, rep.Drifted, "not counted as drifted this run")
	assert.Empty(t, rep.Commands)
	assert.False(t, w.tainted(a))
	assert.False(t, w.tainted(b))
	assert.Empty(t, w.terminationRequests())
	assert.NotContains(t, w.decisionKinds("node/"+a), disruptionrun.KindDrifted)
}

// expire makes node's claim expired: its stamped expireAfter is shorter than its age (launched an hour ago).
func (w *world) expire(node string) {
	w.t.Helper()
	_, err := w.store.UpdateClaim(w.ctx, "claim-"+node, func(c *state.Claim) error { c.ExpireAfter = "30m0s"; return nil })
	require.NoError(w.t, err)
}

// rollExpired runs the expiry of node (the only expired one) through: an Expired command that ignores
// the budget of 0, a replacement launched first, nothing drained until it initializes, then the claim
// handed to termination with reason Expired.
func rollExpired(t *testing.T, w *world, node string) {
	r := w.runner("", nil)
	rep, err := r.Run(w.ctx, "run-1")
	require.NoError(t, err)
	require.Empty(t, rep.Skipped)
	assert.Equal(t, map[string]int{"default": 1}, rep.Expired)
	require.Len(t, rep.Commands, 1, "errors: %v, rejected: %v", rep.Errors, rep.Rejected)
	cmd := rep.Commands[0]
	assert.Equal(t, disruption.ReasonExpired, cmd.Reason)
	assert.Equal(t, disruption.MethodForceful, cmd.Method)
	assert.Equal(t, disruption.ActionReplace, cmd.Action)
	require.Len(t, cmd.Nodes, 1)
	assert.Equal(t, node, cmd.Nodes[0].Name)
	assert.True(t, w.tainted(node))
	assert.Empty(t, w.terminationRequests(), "nothing drains before the replacement is up")
	c, repl := w.replacementOf("claim-" + node)

	rep, err = r.Run(w.ctx, "run-2")
	require.NoError(t, err)
	assert.Empty(t, rep.Commands)
	assert.Empty(t, w.terminationRequests(), "the replacement has not initialized")

	w.initialize(repl.Name, "replacement-"+w.ns)
	rep, err = r.Run(w.ctx, "run-3")
	require.NoError(t, err)
	assert.Contains(t, rep.Advanced, c.ID+": terminating")
	assert.Equal(t, map[string]string{"claim-" + node: "Expired"}, w.terminationRequests())
}

// An expired node goes under a budget of "0": replacement first, then termination with reason Expired.
func TestExpiredNodeIsReplacedFirstUnderAZeroBudget(t *testing.T) {
	w := newWorld(t, "0")
	old := w.node("old", "m5.large", "2", nil, "1500m")
	busy := w.node("busy", "m5.large", "2", nil, "1500m")
	w.expire(old)
	rollExpired(t, w, old)
	assert.False(t, w.tainted(busy))
}

// A karpenter.sh/do-not-disrupt pod does not keep an expired node.
func TestExpiredNodeWithDoNotDisruptPodIsExpired(t *testing.T) {
	w := newWorld(t, "0")
	pinned := w.node("pinned", "m5.large", "2", nil)
	w.pod("precious", pinned, "1500m", map[string]string{disruption.AnnotationDoNotDisrupt: "true"})
	w.expire(pinned)
	rollExpired(t, w, pinned)
}
