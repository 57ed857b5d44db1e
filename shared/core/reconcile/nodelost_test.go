package reconcile

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// A registered (or initialized) claim whose instance runs and whose Node is gone — deleted with
// Nodewright's finalizer stripped — is noted, then handed to the termination flow once the Node has
// stayed gone for NodeLostGrace; a Node that comes back clears the note.
func TestLostNodeIsNotedThenHandedToTermination(t *testing.T) {
	running := []Instance{{ID: "i-1", Claim: "c1", LaunchTime: now.Add(-time.Hour)}}
	registered := func(lostAt time.Time) []Claim {
		return []Claim{{Name: "c1", State: Registered, InstanceID: "i-1", NodeName: "n1", CreatedAt: now.Add(-time.Hour),
			LaunchedAt: now.Add(-time.Hour), NodeLostAt: lostAt}}
	}
	cases := []struct {
		name  string
		in    Input
		want  []Action
		final bool
	}{
		{
			name: "first seen gone: noted, nothing handed over on one look",
			in:   Input{Claims: registered(time.Time{}), Instances: running},
			want: []Action{{Kind: NoteNodeLost, Claim: "c1", Instance: "i-1", Node: "n1", Reason: reasonNodeMissing}},
		},
		{
			name: "gone for less than the grace: wait (a restarted kubelet may register it again)",
			in:   Input{Claims: registered(now.Add(-NodeLostGrace + time.Second)), Instances: running},
		},
		{
			name: "gone for the grace: handed to the termination flow, never terminated here",
			in:   Input{Claims: registered(now.Add(-NodeLostGrace)), Instances: running},
			want: []Action{{Kind: Terminate, Claim: "c1", Instance: "i-1", Node: "n1", Reason: reasonNodeLost}},
		},
		{
			name: "the Node is back: the note is cleared",
			in: Input{Claims: registered(now.Add(-time.Minute)), Instances: running,
				Nodes: []Node{{Name: "n1", InstanceID: "i-1", Ready: true}}},
			want: []Action{{Kind: ClearNodeLost, Claim: "c1", Instance: "i-1", Node: "n1", Reason: reasonNodeBack}},
		},
		{
			name: "a Node being deleted is still there: the deleted-Node hand-over has it",
			in: Input{Claims: registered(time.Time{}), Instances: running,
				Nodes: []Node{{Name: "n1", InstanceID: "i-1"}}},
		},
		{
			name: "a launched claim without a Node is still joining: the registration timeout has it",
			in: Input{Claims: []Claim{{Name: "c1", State: Launched, InstanceID: "i-1", LaunchedAt: now.Add(-time.Minute)}},
				Instances: running},
		},
		{
			name: "a draining claim's missing Node is the termination flow's",
			in:   Input{Claims: []Claim{{Name: "c1", State: Draining, InstanceID: "i-1", NodeName: "n1"}}, Instances: running},
		},
		{
			name: "instance and Node gone: collected as before, not handed over as lost",
			in:   Input{Claims: registered(now.Add(-time.Hour))},
			want: []Action{{Kind: DeleteClaim, Claim: "c1", Instance: "i-1", Reason: reasonGone, ConfirmGone: true}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Decide(complete(tc.in))
			assert.Empty(t, got.Skipped)
			assert.Equal(t, tc.want, got.Actions)
		})
	}
}

func TestLostNodeIsNotJudgedOnPartialData(t *testing.T) {
	in := complete(Input{Claims: []Claim{{Name: "c1", State: Registered, InstanceID: "i-1", NodeName: "n1",
		LaunchedAt: now.Add(-time.Hour), NodeLostAt: now.Add(-time.Hour)}},
		Instances: []Instance{{ID: "i-1", Claim: "c1", LaunchTime: now.Add(-time.Hour)}}})
	in.NodesComplete = false
	got := Decide(in)
	assert.Empty(t, got.Actions, "a Node list that could not be read whole says nothing about a Node being gone")
	assert.NotEmpty(t, got.Skipped)
}
