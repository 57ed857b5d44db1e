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
			want: []Action{{Kind: AdoptInstance, Claim: "c1", Instance: "i-1", Reason: reasonAdopted}},
		},
		{
			name: "adoption wins over the launch timeout",
			in: Input{
				Claims:    []Claim{{Name: "c1", State: Pending, CreatedAt: now.Add(-time.Hour)}},
				Instances: []Instance{{ID: "i-1", Claim: "c1", LaunchTime: now.Add(-time.Hour)}},
			},
			want: []Action{{Kind: AdoptInstance, Claim: "c1", Instance: "i-1", Reason: reasonAdopted}},
		},
		{
			name: "launch timeout",
			in:   Input{Claims: []Claim{{Name: "old", State: Pending, CreatedAt: now.Add(-LaunchTimeout)}, {Name: "young", State: Pending, CreatedAt: now.Add(-time.Minute)}}},
			want: []Action{{Kind: DeleteClaim, Claim: "old", Reason: reasonLaunch}},
		},
		{
			name: "registration timeout hands the claim to the termination flow",
			in: Input{
				Claims:    []Claim{{Name: "c1", State: Launched, InstanceID: "i-1", LaunchedAt: now.Add(-16 * time.Minute)}},
				Instances: []Instance{{ID: "i-1", Claim: "c1", LaunchTime: now.Add(-16 * time.Minute)}},
			},
			want: []Action{{Kind: Terminate, Claim: "c1", Instance: "i-1", Reason: reasonRegistration}},
		},
		{
			name: "an own instance without a claim gets its claim rebuilt, with its Node; a brand-new one waits",
			in: Input{
				Instances: []Instance{
					{ID: "i-old", Claim: "default-a", LaunchTime: now.Add(-LeakGrace)},
					{ID: "i-new", Claim: "default-b", LaunchTime: now.Add(-time.Second)},
				},
				Nodes: []Node{{Name: "n-old", InstanceID: "i-old", Ready: true}},
			},
			want: []Action{{Kind: RebuildClaim, Claim: "default-a", Instance: "i-old", Node: "n-old", Reason: reasonOrphan}},
		},
		{
			name: "an orphan without a Node past the registration timeout is rebuilt, then handed over",
			in:   Input{Instances: []Instance{{ID: "i-1", Claim: "default-a", LaunchTime: now.Add(-RegistrationTimeout)}}},
			want: []Action{
				{Kind: RebuildClaim, Claim: "default-a", Instance: "i-1", Reason: reasonOrphan},
				{Kind: Terminate, Claim: "default-a", Instance: "i-1", Reason: reasonRegistration},
			},
		},
		{
			name: "an orphan whose claim name is taken by a deleted record, or that has none, is named by its instance",
			in: Input{
				Claims: []Claim{{Name: "default-a", State: Deleted, InstanceID: "i-0"}},
				Instances: []Instance{
					{ID: "i-1", Claim: "default-a", LaunchTime: now.Add(-time.Minute)},
					{ID: "i-2", LaunchTime: now.Add(-time.Minute)},
				},
			},
			want: []Action{
				{Kind: RebuildClaim, Claim: "adopted-i-1", Instance: "i-1", Reason: reasonOrphan},
				{Kind: RebuildClaim, Claim: "adopted-i-2", Instance: "i-2", Reason: reasonOrphan},
			},
		},
		{
			name: "scale-up race: a claim launched after the instance list was read is left alone",
			in: Input{
				Claims: []Claim{{Name: "c1", State: Launched, InstanceID: "i-new", CreatedAt: now.Add(-20 * time.Second),
					LaunchedAt: now.Add(-time.Second)}},
			},
		},
		{
			name: "a launched claim whose instance is missing past the grace is forgotten once EC2 confirms it gone",
			in: Input{
				Claims: []Claim{{Name: "c1", State: Launched, InstanceID: "i-1", LaunchedAt: now.Add(-ClaimGCGrace)}},
			},
			want: []Action{{Kind: DeleteClaim, Claim: "c1", Instance: "i-1", Reason: reasonGone, ConfirmGone: true}},
		},
		{
			name: "ghost node: the termination flow removes it once the instance is confirmed gone",
			in: Input{
				Claims: []Claim{{Name: "c1", State: Registered, InstanceID: "i-1", LaunchedAt: now.Add(-time.Hour)}},
				Nodes:  []Node{{Name: "n1", InstanceID: "i-1", Ready: false}},
			},
			want: []Action{{Kind: Terminate, Claim: "c1", Instance: "i-1", Node: "n1", Reason: reasonGhostNode, ConfirmGone: true}},
		},
		{
			name: "a Ready node outweighs a lagging instance list for its claim",
			in: Input{
				Claims: []Claim{{Name: "c1", State: Registered, InstanceID: "i-1", LaunchedAt: now.Add(-time.Hour)}},
				Nodes:  []Node{{Name: "n1", InstanceID: "i-1", Ready: true}},
			},
		},
		{
			name: "a Node no claim or own instance stands for is not ours: never touched",
			in: Input{
				Claims:    []Claim{{Name: "c1", State: Registered, InstanceID: "i-1", LaunchedAt: now.Add(-time.Hour)}},
				Instances: []Instance{{ID: "i-1", Claim: "c1", LaunchTime: now.Add(-time.Hour)}},
				Nodes: []Node{{Name: "n1", InstanceID: "i-1", Ready: true}, {Name: "karpenter-node", InstanceID: "i-karpenter"},
					{Name: "karpenter-ready", InstanceID: "i-karpenter2", Ready: true}},
			},
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
		assert.Empty(t, got.Actions, "an unreadable claim list must not make every instance look orphaned")
		assert.NotEmpty(t, got.Skipped)
	}
}

func TestDecisionsAreDeterministic(t *testing.T) {
	in := complete(Input{Instances: []Instance{
		{ID: "i-3", LaunchTime: now.Add(-time.Minute)}, {ID: "i-1", LaunchTime: now.Add(-time.Minute)}, {ID: "i-2", LaunchTime: now.Add(-time.Minute)},
	}})
	first := Decide(in)
	in.Instances[0], in.Instances[2] = in.Instances[2], in.Instances[0]
	assert.Equal(t, first, Decide(in))
	assert.Equal(t, "i-1", first.Actions[0].Instance)
	for _, a := range first.Actions {
		assert.Equal(t, RebuildClaim, a.Kind, "an own instance without a claim is adopted, never terminated")
	}
}
