package e2e

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/disruption"
	"github.com/nodewright/nodewright/shared/core/settings"
	"github.com/nodewright/nodewright/shared/flows/disruptionrun"
	"github.com/nodewright/nodewright/shared/flows/provisioning"
)

// TestDriftedStaticNodesAreReplacedOneForOne: a static pool of 2 nodes launched into moto drifts (a newer
// AMI matches its EC2NodeClass). The disruption run replaces each node with exactly one new claim of the
// same pool, launched into moto before anything drains; once the replacements have joined and
// initialized, the next run hands the old nodes to the termination flow, reason Drifted. The pool holds
// at most replicas + its budget claims, and never fewer than replicas in service.
func TestDriftedStaticNodesAreReplacedOneForOne(t *testing.T) {
	w := newWorld(t, "100%")
	set := settings.Default()
	set.FeatureGates.StaticCapacity = true
	item, err := state.SettingsItem(set)
	require.NoError(t, err)
	_, err = w.store.PutConfig(w.ctx, item)
	require.NoError(t, err)
	w.applyFixed(2)
	up, err := w.prov.Run(w.ctx, "static-up")
	require.NoError(t, err)
	require.Len(t, up.Claims, 2, "static: %v errors: %v", up.Static, up.Errors)
	old := map[string]bool{}
	for _, c := range up.Claims {
		w.join(c.Name)
		old[c.Name] = true
	}

	time.Sleep(time.Second) // moto dates images to the second; the resolver takes the newest
	w.publishImage("newer-" + w.ns)
	rep, err := w.runner("", nil).Run(w.ctx, "static-drift")
	require.NoError(t, err)
	require.Len(t, rep.Commands, 2, "static drift: %v errors: %v rejected: %v advanced: %v", rep.StaticDrift, rep.Errors, rep.Rejected, rep.Advanced)
	var replacements []string
	for _, cmd := range rep.Commands {
		assert.Equal(t, disruptionrun.MethodStaticDrift, cmd.Method)
		assert.Equal(t, disruption.ReasonDrifted, cmd.Reason)
		require.Len(t, cmd.Nodes, 1)
		assert.True(t, old[cmd.Nodes[0].Claim])
		require.Len(t, cmd.Replacements, 1, "exactly one replacement per drifted node")
		assert.Equal(t, "fixed", cmd.Replacements[0].NodePool)
	}
	commands, err := w.store.ListDisruptionCommands(w.ctx)
	require.NoError(t, err)
	for _, c := range commands {
		replacements = append(replacements, c.Replacements...)
	}
	require.Len(t, replacements, 2)
	running := w.claimedInstances()
	for _, r := range replacements {
		assert.True(t, running[r], "replacement %s launched into moto", r)
	}
	assert.Empty(t, w.terminationRequests(), "nothing drains before the replacements are up")
	claims, err := w.store.ListClaims(w.ctx)
	require.NoError(t, err)
	assert.EqualValues(t, 4, provisioning.CountStatic(claims, "fixed").Active, "replicas + budget at most")

	for _, r := range replacements {
		w.join(r)
	}
	next, err := w.runner("", nil).Run(w.ctx, "static-drift-2")
	require.NoError(t, err)
	assert.Empty(t, next.StaticDrift, "the replacements are not drifted: %v", next.StaticDrift)
	sent := w.terminationRequests()
	assert.Len(t, sent, 2)
	for c := range old {
		assert.Equal(t, "Drifted", sent[c], "old node %s goes once its replacement initialized", c)
	}
}
