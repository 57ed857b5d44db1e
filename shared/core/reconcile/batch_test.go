package reconcile

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestBatchedLaunches(t *testing.T) {
	early := now.Add(-2 * time.Minute)
	cases := map[string]struct {
		in   Input
		want []Action
	}{
		"an interrupted batch: its pending claims adopt its untagged instances in id order": {
			in: Input{
				Claims: []Claim{
					{Name: "c1", State: Launched, InstanceID: "i-1", Batch: "batch-a", CreatedAt: early, LaunchedAt: early},
					{Name: "c2", State: Pending, Batch: "batch-a", CreatedAt: early},
					{Name: "c3", State: Pending, Batch: "batch-a", CreatedAt: early},
				},
				Instances: []Instance{
					{ID: "i-3", Batch: "batch-a", LaunchTime: early}, {ID: "i-1", Batch: "batch-a", LaunchTime: early},
					{ID: "i-2", Batch: "batch-a-1", LaunchTime: early},
				},
			},
			want: []Action{
				{Kind: AdoptInstance, Claim: "c2", Instance: "i-2", Reason: reasonAdoptedBatch},
				{Kind: AdoptInstance, Claim: "c3", Instance: "i-3", Reason: reasonAdoptedBatch},
			},
		},
		"an untagged instance of a batch with pending claims is never an orphan": {
			in: Input{
				Claims:    []Claim{{Name: "c1", State: Pending, Batch: "batch-a", CreatedAt: early}},
				Instances: []Instance{{ID: "i-1", Batch: "batch-a", Claim: "c9", LaunchTime: early}, {ID: "i-2", Batch: "batch-a", LaunchTime: early}, {ID: "i-3", Batch: "batch-a", LaunchTime: early}},
			},
			want: []Action{
				{Kind: AdoptInstance, Claim: "c1", Instance: "i-2", Reason: reasonAdoptedBatch},
				{Kind: RebuildClaim, Claim: "c9", Instance: "i-1", Reason: reasonOrphan},
			},
		},
		"a batch its run may still be recording: its claims wait and its instances are no orphans": {
			in: Input{
				Claims: []Claim{
					{Name: "c1", State: Pending, Batch: "batch-a", CreatedAt: now.Add(-BatchAdoptGrace + time.Second)},
					{Name: "c2", State: Pending, Batch: "batch-a", CreatedAt: now.Add(-BatchAdoptGrace + time.Second)},
				},
				Instances: []Instance{{ID: "i-1", Batch: "batch-a", LaunchTime: early}, {ID: "i-2", Batch: "batch-a", LaunchTime: early}},
			},
			want: nil,
		},
		"another batch's instance is not adopted; a batch without pending claims leaves orphans": {
			in: Input{
				Claims:    []Claim{{Name: "c1", State: Pending, Batch: "batch-a", CreatedAt: early}},
				Instances: []Instance{{ID: "i-1", Batch: "batch-b", LaunchTime: early}},
			},
			want: []Action{{Kind: RebuildClaim, Claim: "adopted-i-1", Instance: "i-1", Reason: reasonOrphan}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.want, Decide(complete(tc.in)).Actions)
		})
	}
}

func TestBatchOf(t *testing.T) {
	assert.Equal(t, "batch-abc", BatchOf("batch-abc"))
	assert.Equal(t, "batch-abc", BatchOf("batch-abc-3"))
	assert.Equal(t, "other-1", BatchOf("other-1"))
}
