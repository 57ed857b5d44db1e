package state

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAClaimsViewReadsNothingForItsOwnWrites: a warm store that created, launched and deleted claims
// queries no shard on its next read and answers as a whole read does; a claim another store wrote in a
// shard it also wrote is still seen (the shard's counter moved past the view's count).
func TestAClaimsViewReadsNothingForItsOwnWrites(t *testing.T) {
	ctx := context.Background()
	other, clk := newStore(t)
	warm := New(other.db, other.table, WithClock(clk.Now), WithClaimsView())
	same := func(msg string) ClaimsRead {
		t.Helper()
		got, err := warm.ListClaims(ctx)
		require.NoError(t, err, msg)
		want, err := other.ListClaims(ctx)
		require.NoError(t, err, msg)
		assert.Equal(t, want, got, msg)
		return warm.view.LastRead()
	}
	_, err := other.CreateClaims(ctx, claimsNamed(20, "seed"))
	require.NoError(t, err)
	cold := same("cold")
	assert.Equal(t, ClaimShards, cold.ShardsQueried)

	const n = MaxClaimsPerWrite
	created, err := warm.CreateClaims(ctx, claimsNamed(n, "own"))
	require.NoError(t, err)
	afterCreate := same("the view's own launches")
	assert.Zero(t, afterCreate.ShardsQueried, "%d claims written through the view's store are not read again", n)
	assert.Zero(t, afterCreate.ItemsRead)

	launched := make([]Claim, 10)
	for i := range launched {
		launched[i] = created[i]
		launched[i].Lifecycle, launched[i].InstanceID = Launched, fmt.Sprintf("i-%d", i)
	}
	_, err = warm.PutClaims(ctx, created[:10], launched)
	require.NoError(t, err)
	_, err = warm.UpdateClaim(ctx, "own-011", func(c *Claim) error { c.Lifecycle = Deleted; return nil })
	require.NoError(t, err)
	_, err = warm.UpdateClaim(ctx, "seed-003", func(c *Claim) error { c.Zone = "us-east-1b"; return nil })
	require.NoError(t, err)
	afterUpdates := same("its own updates, a claim deleted")
	assert.Zero(t, afterUpdates.ShardsQueried)

	// Another writer in a shard the view's store writes too.
	_, err = other.CreateClaim(ctx, Claim{Name: "elsewhere", NodePool: "p"})
	require.NoError(t, err)
	_, err = warm.CreateClaim(ctx, sameShard(t, "elsewhere", "own-late"))
	require.NoError(t, err)
	mixed := same("another store's claim in a shard the view also wrote")
	assert.Equal(t, 1, mixed.ShardsQueried, "the shard another store wrote is read again")
	got, err := warm.ListClaims(ctx)
	require.NoError(t, err)
	assert.Contains(t, claimNames(got), "elsewhere")
	assert.NotContains(t, claimNames(got), "own-011", "deleted")
	assert.Zero(t, warm.view.LastRead().ShardsQueried)
}

// TestAClaimsViewStaysAWholeReadUnderConcurrentOwnAndOtherWrites runs the view's store's writes, another
// store's writes and the view's reads at once; each read answers as a whole read afterwards does once
// the writes are over.
func TestAClaimsViewStaysAWholeReadUnderConcurrentOwnAndOtherWrites(t *testing.T) {
	ctx := context.Background()
	other, clk := newStore(t)
	warm := New(other.db, other.table, WithClock(clk.Now), WithClaimsView())
	_, err := warm.ListClaims(ctx)
	require.NoError(t, err)

	var wg sync.WaitGroup
	for w, s := range []*Store{warm, other, warm} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 8 {
				_, err := s.CreateClaim(ctx, Claim{Name: fmt.Sprintf("w%d-%02d", w, i), NodePool: "p"})
				assert.NoError(t, err)
				_, err = s.UpdateClaim(ctx, fmt.Sprintf("w%d-%02d", w, i), func(c *Claim) error { c.Lifecycle = Launched; return nil })
				assert.NoError(t, err)
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 6 {
			_, err := warm.ListClaims(ctx)
			assert.NoError(t, err)
		}
	}()
	wg.Wait()
	got, err := warm.ListClaims(ctx)
	require.NoError(t, err)
	want, err := other.ListClaims(ctx)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.Len(t, got, 24)
	again, err := warm.ListClaims(ctx)
	require.NoError(t, err)
	assert.Equal(t, want, again)
	assert.Zero(t, warm.view.LastRead().ShardsQueried)
}

// sameShard returns a claim named prefix-<n> in the shard of name.
func sameShard(t *testing.T, name, prefix string) Claim {
	t.Helper()
	for i := range 1000 {
		c := fmt.Sprintf("%s-%d", prefix, i)
		if claimShard(c) == claimShard(name) {
			return Claim{Name: c, NodePool: "p"}
		}
	}
	require.FailNow(t, "no name in the shard of "+name)
	return Claim{}
}

func claimNames(cs []Claim) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name
	}
	return out
}
