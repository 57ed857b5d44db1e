package reconcile

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

var now = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func complete(in Input) Input {
	in.Now, in.ClaimsComplete, in.InstancesComplete, in.NodesComplete = now, true, true, true
	return in
}

func TestDecide(t *testing.T) {
	cases := []struct {
		name string
		in   Input
		want []Action
	}{
		{
			name: "a healthy cluster needs nothing",
			in: Input{
				Claims:    []Claim{{Name: "c1", State: Registered, InstanceID: "i-1", CreatedAt: now.Add(-time.Hour), LaunchedAt: now.Add(-time.Hour)}},
				Instances: []Instance{{ID: "i-1", Claim: "c1", LaunchTime: now.Add(-time.Hour)}},
				Nodes:     []Node{{Name: "n1", InstanceID: "i-1", Ready: true}},
			},
		},
		{
			name: "crash after CreateFleet: the pending claim adopts its instance",
			in: Input{
				Claims:    []Claim{{Name: "c1", State: Pending, CreatedAt: now.Add(-10 * time.Second)}},
				Instances: []Instance{{ID: "i-1", Claim: "c1", LaunchTime: now.Add(-5 * time.Second)}},
			},
			want: []Action{{Kind: AdoptInstance, Claim: "c1", Instance: "i-1", Reason: "the instance was launched but the claim was not updated (interrupted launch)"}},
		},
		{
			name: "adoption wins over the launch timeout",
			in: Input{
				Claims:    []Claim{{Name: "c1", State: Pending, CreatedAt: now.Add(-time.Hour)}},
				Instances: []Instance{{ID: "i-1", Claim: "c1", LaunchTime: now.Add(-time.Hour)}},
			},
			want: []Action{{Kind: AdoptInstance, Claim: "c1", Instance: "i-1", Reason: "the instance was launched but the claim was not updated (interrupted launch)"}},
		},
		{
			name: "launch timeout",
			in:   Input{Claims: []Claim{{Name: "old", State: Pending, CreatedAt: now.Add(-LaunchTimeout)}, {Name: "young", State: Pending, CreatedAt: now.Add(-time.Minute)}}},
			want: []Action{{Kind: DeleteClaim, Claim: "old", Reason: "launch_timeout: not launched within 5m"}},
		},
		{
			name: "registration timeout terminates first, then forgets",
			in: Input{
				Claims:    []Claim{{Name: "c1", State: Launched, InstanceID: "i-1", LaunchedAt: now.Add(-16 * time.Minute)}},
				Instances: []Instance{{ID: "i-1", Claim: "c1", LaunchTime: now.Add(-16 * time.Minute)}},
			},
			want: []Action{
				{Kind: TerminateInstance, Claim: "c1", Instance: "i-1", Reason: "registration_timeout: no Node registered within 15m"},
				{Kind: DeleteClaim, Claim: "c1", Instance: "i-1", Reason: "registration_timeout: no Node registered within 15m"},
			},
		},
		{
			name: "a leaked instance is terminated after the grace, a brand-new one is not",
			in: Input{Instances: []Instance{
				{ID: "i-old", Claim: "gone", LaunchTime: now.Add(-LeakGrace)},
				{ID: "i-new", Claim: "settling", LaunchTime: now.Add(-time.Second)},
			}},
			want: []Action{{Kind: TerminateInstance, Instance: "i-old", Claim: "gone", Reason: "leaked: no live claim stands for this instance"}},
		},
		{
			name: "ghost claim and ghost node",
			in: Input{
				Claims: []Claim{{Name: "c1", State: Registered, InstanceID: "i-1", LaunchedAt: now.Add(-time.Hour)}},
				Nodes:  []Node{{Name: "n1", InstanceID: "i-1", Ready: false}},
			},
			want: []Action{
				{Kind: DeleteNode, Node: "n1", Instance: "i-1", Reason: "ghost node: its instance is gone"},
				{Kind: DeleteClaim, Claim: "c1", Instance: "i-1", Reason: "garbage_collected: the instance is gone and its Node is not Ready"},
			},
		},
		{
			name: "a Ready node outweighs a lagging instance list for its claim",
			in: Input{
				Claims: []Claim{{Name: "c1", State: Registered, InstanceID: "i-1"}},
				Nodes:  []Node{{Name: "n1", InstanceID: "i-1", Ready: true}},
			},
			want: []Action{{Kind: DeleteNode, Node: "n1", Instance: "i-1", Reason: "ghost node: its instance is gone"}},
		},
		{
			name: "draining claims belong to the termination path",
			in: Input{
				Claims:    []Claim{{Name: "c1", State: Draining, InstanceID: "i-1"}},
				Instances: []Instance{{ID: "i-1", Claim: "c1", LaunchTime: now.Add(-time.Hour)}},
				Nodes:     []Node{{Name: "n1", InstanceID: "i-1"}},
			},
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

func TestNothingIsDecidedOnPartialData(t *testing.T) {
	leak := Input{Instances: []Instance{{ID: "i-1", LaunchTime: now.Add(-time.Hour)}}}
	for _, partial := range []func(*Input){
		func(in *Input) { in.ClaimsComplete = false },
		func(in *Input) { in.InstancesComplete = false },
		func(in *Input) { in.NodesComplete = false },
	} {
		in := complete(leak)
		partial(&in)
		got := Decide(in)
		assert.Empty(t, got.Actions, "an unreadable claim list must not make every instance look leaked")
		assert.NotEmpty(t, got.Skipped)
	}
}

func TestDecisionsAreDeterministic(t *testing.T) {
	in := complete(Input{Instances: []Instance{
		{ID: "i-3", LaunchTime: now.Add(-time.Hour)}, {ID: "i-1", LaunchTime: now.Add(-time.Hour)}, {ID: "i-2", LaunchTime: now.Add(-time.Hour)},
	}})
	first := Decide(in)
	in.Instances[0], in.Instances[2] = in.Instances[2], in.Instances[0]
	assert.Equal(t, first, Decide(in))
	assert.Equal(t, "i-1", first.Actions[0].Instance)
}
