package lifecycle

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/flows/termination"
)

// tagged lists an instance for each claim, as EC2 would.
func tagged(claims ...state.Claim) []instance.Instance {
	var out []instance.Instance
	for _, c := range claims {
		out = append(out, instance.Instance{ID: c.InstanceID, Tags: map[string]string{instance.TagNodeClaim: c.Name}})
	}
	return out
}

func TestResendInterval(t *testing.T) {
	for sends, want := range map[int]time.Duration{0: 15 * time.Minute, 1: 15 * time.Minute, 2: 30 * time.Minute,
		3: time.Hour, 5: 4 * time.Hour, 50: 4 * time.Hour} {
		assert.Equal(t, want, resendInterval(sends), "after %d hand-overs", sends)
	}
}

func TestStalledFor(t *testing.T) {
	now := testNow
	claim := func(l state.Lifecycle, since time.Duration, sentAgo time.Duration, sends int) state.Claim {
		c := claimOn("default-s", "default", l, "i-0s", "ip-s")
		switch l {
		case state.Draining:
			c.DrainingAt = at(now, -since)
		case state.Terminating:
			c.TerminatingAt = at(now, -since)
		}
		if sends > 0 {
			c.TerminationSentAt, c.TerminationSends = at(now, -sentAgo), sends
		}
		return c
	}
	cases := []struct {
		name  string
		claim state.Claim
		want  bool
	}{
		{"draining for 16 minutes, never re-sent", claim(state.Draining, 16*time.Minute, 0, 0), true},
		{"terminating for 16 minutes", claim(state.Terminating, 16*time.Minute, 0, 0), true},
		{"a fresh drain", claim(state.Draining, 14*time.Minute, 0, 0), false},
		{"re-sent 10 minutes ago", claim(state.Draining, time.Hour, 10*time.Minute, 1), false},
		{"re-sent 16 minutes ago, the first time", claim(state.Draining, time.Hour, 16*time.Minute, 1), true},
		{"re-sent 16 minutes ago, the second time: waits 30", claim(state.Draining, time.Hour, 16*time.Minute, 2), false},
		{"in service", claim(state.Initialized, time.Hour, 0, 0), false},
		{"deleted", claim(state.Deleted, time.Hour, 0, 0), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, got := stalledFor(tc.claim, now)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestStalledDrainIsSentAgainOnceWithItsReason(t *testing.T) {
	base := testNow
	stalled := stalledClaim("default-old", state.Draining)
	stalled.DisruptionReason = "Drifted"
	fresh := claimOn("default-new", "default", state.Draining, "i-0n", "ip-n")
	fresh.DrainingAt, fresh.DisruptionReason = at(base, -time.Minute), "Empty"
	r := newRig(t, stalled, fresh)
	r.instances.list = tagged(stalled, fresh)

	rep := r.run(t)
	require.Len(t, r.queue.sent, 1, "only the stalled drain: %s", rep)
	assert.Equal(t, termination.Request{Claim: "default-old", Reason: "Drifted", RequestedAt: *stalled.DrainingAt}, r.queue.sent[0],
		"the original reason and start, so the drain's deadline and metrics stay its own")
	c := r.store.claim(t, "default-old")
	assert.Equal(t, 1, c.TerminationSends)
	assert.Equal(t, base, *c.TerminationSentAt)
	require.Len(t, r.store.decisions, 1)
	d := r.store.decisions[0]
	assert.Equal(t, "TerminationRequested/DrainStalled", d.Kind+"/"+d.Reason)
	assert.Equal(t, "20m0s", d.Details["age"])
	assert.Equal(t, "1", d.Details["attempt"])
	assert.Contains(t, d.Message, "draining for 20m0s")

	r.now = base.Add(5 * time.Minute)
	r.run(t)
	assert.Len(t, r.queue.sent, 1, "not again within the interval")
	r.now = base.Add(16 * time.Minute)
	r.run(t)
	var names []string
	for _, req := range r.queue.sent[1:] {
		names = append(names, req.Claim)
	}
	assert.ElementsMatch(t, []string{"default-old", "default-new"}, names,
		"the old one again once the interval has passed without the drain finishing; the other has now stalled too")
	assert.Equal(t, 2, r.store.claim(t, "default-old").TerminationSends)
}

func TestOverlappingPassesSendOnce(t *testing.T) {
	stalled := stalledClaim("default-old", state.Draining)
	r := newRig(t, stalled)
	r.instances.list = tagged(stalled)
	r.store.afterList = func(s *hookStore) { // another pass, with its lease expired under it, sends first
		c := s.claim(t, "default-old")
		c.TerminationSentAt, c.TerminationSends = &testNow, 1
	}
	r.run(t)
	assert.Empty(t, r.queue.sent, "the claim's mark changed since the pass read it")
	assert.Equal(t, 1, r.store.claim(t, "default-old").TerminationSends)
}

func TestAFailedSendIsTriedAgainNextPass(t *testing.T) {
	stalled := stalledClaim("default-old", state.Terminating)
	r := newRig(t, stalled)
	r.instances.list = tagged(stalled)
	r.queue.err = errors.New("sqs: throttled")

	rep := r.run(t)
	assert.Contains(t, rep.Errors, "nodeclaim/default-old: sqs: throttled")
	c := r.store.claim(t, "default-old")
	assert.Nil(t, c.TerminationSentAt, "the mark is taken back")
	assert.Zero(t, c.TerminationSends)

	r.queue.err = nil
	r.run(t)
	require.Len(t, r.queue.sent, 1)
	assert.Equal(t, termination.Request{Claim: "default-old", Reason: ReasonDrainStalled, RequestedAt: *stalled.TerminatingAt},
		r.queue.sent[0], "a claim without a disruption reason is sent as a stalled drain")
}
