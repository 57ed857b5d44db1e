package disruptionrun

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/mirror"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// fakeClaimMirrors records what a run asked to follow; it reports leftovers or errors when told to.
type fakeClaimMirrors struct {
	mu       sync.Mutex
	followed []state.Claim
	calls    int
	left     int
	fail     error
	// during is what the store held for each followed claim when the follower was called.
	during map[string]state.Claim
	store  *fakeStore
}

func (m *fakeClaimMirrors) Follow(_ context.Context, claims []state.Claim) mirror.FollowReport {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls++
	m.followed = append(m.followed, claims...)
	if m.during == nil {
		m.during = map[string]state.Claim{}
	}
	for _, c := range claims {
		m.during[c.Name] = m.store.claim(c.Name)
	}
	if m.fail != nil {
		return mirror.FollowReport{Errors: []string{"nodeclaim/" + claims[0].Name + ": " + m.fail.Error()}}
	}
	return mirror.FollowReport{Written: len(claims) - m.left, Left: m.left}
}

func (m *fakeClaimMirrors) names() map[string]*state.DisruptingMark {
	out := map[string]*state.DisruptingMark{}
	for _, c := range m.followed {
		out[c.Name] = c.Disrupting
	}
	return out
}

// A command's candidates are marked in the state table when their Nodes are tainted, and the run then
// hands the marked records (and its replacement, read back) to the follower, once, after its own writes:
// their mirrors show DisruptionReason without waiting for the lifecycle's sweep.
func TestACommandsCandidatesAreMarkedAndTheirMirrorsFollowedAfterTheRun(t *testing.T) {
	f := newFixture(t, "100%")
	f.node("n1", "medium", "1")
	f.node("n2", "medium", "1")
	f.node("n3", "medium", "1")
	m := &fakeClaimMirrors{store: f.store}
	f.runner.deps.ClaimMirrors = m
	rep := f.run()

	require.Len(t, rep.Commands, 1)
	c := f.store.command()
	require.Equal(t, state.CommandLaunching, c.Phase)
	assert.Equal(t, 2, m.calls, "the Consolidatable marks found before the decision, beside the run; the command's changes after it")
	got := m.names()
	for _, n := range []string{"claim-n1", "claim-n2", "claim-n3"} {
		mark := f.store.claim(n).Disrupting
		require.NotNil(t, mark, n)
		assert.Equal(t, c.ID, mark.Command)
		assert.Equal(t, "Underutilized", mark.Reason)
		assert.Equal(t, c.Replacements, mark.Replacements)
		require.Contains(t, got, n)
		assert.Equal(t, mark, got[n], "the follower is given the record the mark committed")
		assert.Equal(t, f.store.claim(n).Version, m.during[n].Version, "followed after the commit")
	}
	assert.Contains(t, got, c.Replacements[0], "the replacement's mirror is followed too")
	assert.Equal(t, 3+4, rep.ClaimMirrorsWritten, "three marked Consolidatable, then three candidates and a replacement")

	// The command is rolled back (its replacement never initializes): the marks are cleared and the
	// cleared records followed.
	m.followed = nil
	f.clock.Advance(DefaultReplacementTimeout + time.Minute)
	f.runner.cfg.MaxCommands = 1
	f.launch.prepareErr = errors.New("stop after advancing")
	f.run()
	got = m.names()
	for _, n := range []string{"claim-n1", "claim-n2", "claim-n3"} {
		assert.Nil(t, f.store.claim(n).Disrupting, n)
		require.Contains(t, got, n)
		assert.Nil(t, got[n])
	}
}

// The follower's bounds and failures never fail the run: what it leaves is counted, its errors reported.
func TestClaimMirrorFailuresNeverFailTheRun(t *testing.T) {
	f := newFixture(t, "100%")
	f.node("busy", "medium", "3")
	f.node("empty", "medium")
	f.runner.cfg.MaxCommands = 1
	m := &fakeClaimMirrors{store: f.store, fail: errors.New("the API server refused")}
	f.runner.deps.ClaimMirrors = m
	rep := f.run()
	require.Len(t, rep.Commands, 1)
	assert.Equal(t, map[string]string{"claim-empty": "Empty"}, f.terms.claims(), "the run did its work")
	assert.Contains(t, rep.Errors, "nodeclaim mirrors: nodeclaim/claim-empty: the API server refused")
	assert.NotNil(t, f.store.claim("claim-empty").Disrupting)
}

// A mark no active command holds (its run died between the rollback and clearing it) is cleared by the
// next run.
func TestStaleMarksAreCleared(t *testing.T) {
	f := newFixture(t, "0%") // no new command
	f.node("busy", "medium", "3")
	c := f.store.claim("claim-busy")
	c.Disrupting = &state.DisruptingMark{Command: "gone-1", Reason: "Underutilized", Since: start}
	f.store.setClaim(c)
	m := &fakeClaimMirrors{store: f.store}
	f.runner.deps.ClaimMirrors = m
	f.run()
	assert.Nil(t, f.store.claim("claim-busy").Disrupting)
	require.Contains(t, m.names(), "claim-busy")
}
