package pricing

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

func TestNewProviderFromEnvReadsIsolatedVPC(t *testing.T) {
	cases := []struct {
		name, value string
		isolated    bool
		wantErr     string
	}{
		{name: "unset", value: ""},
		{name: "false", value: "false"},
		{name: "true", value: "true", isolated: true},
		{name: "anything else", value: "yes", wantErr: `NODEWRIGHT_ISOLATED_VPC="yes": want true or false`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewProviderFromEnv("eu-west-1", func(k string) string {
				if k == EnvIsolatedVPC {
					return tc.value
				}
				return ""
			})
			if tc.wantErr != "" {
				assert.EqualError(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.isolated, p.Isolated())
			if tc.isolated {
				assert.Equal(t, "static table for eu-west-1 generated 2025-04-24T13:17:44Z; isolated VPC: the Pricing API is never called",
					p.OnDemandSourceInfo())
				assert.Equal(t, p.OnDemandSourceInfo(), p.DecisionNote())
			} else {
				assert.Equal(t, "static table for eu-west-1 generated 2025-04-24T13:17:44Z", p.OnDemandSourceInfo())
				assert.Empty(t, p.DecisionNote(), "a provider that may call the Pricing API adds nothing to decisions")
			}
		})
	}
}

// TestIsolatedProviderNeverCallsThePricingAPI: an isolated lifecycle never sends a request to the Pricing
// API — not on its first refresh with nothing stored, not after 12 hours, not after a failure's retry
// interval — and keeps pricing with the shipped table; stored tables do not replace it either.
func TestIsolatedProviderNeverCallsThePricingAPI(t *testing.T) {
	ctx := context.Background()
	store := newStateStore(t)
	srv := newPriceListServer(t, syntheticPages("eu-west-1", shippedTimes(t, "eu-west-1", 1.02), apiPageSize))
	shipped, err := NewProvider("eu-west-1")
	require.NoError(t, err)
	p, err := NewProvider("eu-west-1")
	require.NoError(t, err)
	p.Isolate()
	clk := &clock{now: t0}
	r := NewOnDemandRefresher(p, APISource{API: srv.client("eu-west-1")}, store, clk.Now)

	for _, after := range []time.Duration{0, OnDemandRetryAfter, OnDemandRefreshEvery, 3 * OnDemandRefreshEvery} {
		clk.now = t0.Add(after)
		res, err := r.Refresh(ctx)
		require.NoError(t, err)
		assert.False(t, res.Refreshed)
		assert.Equal(t, IsolatedNote, res.Skipped)
		assert.Contains(t, res.Source, "static table for eu-west-1")
	}
	reqs, _ := srv.recorded()
	assert.Empty(t, reqs, "no request reached the Pricing API")
	err = p.RefreshOnDemand(ctx, APISource{API: srv.client("eu-west-1")}, t0)
	assert.ErrorIs(t, err, ErrIsolated, "a direct refresh is refused too")
	reqs, _ = srv.recorded()
	assert.Empty(t, reqs)
	_, err = store.OnDemandPrices(ctx)
	assert.True(t, state.IsNotFound(err), "nothing stored: %v", err)

	// A table stored before the deployment became isolated does not replace the shipped one.
	require.NoError(t, store.PutOnDemandPrices(ctx, state.OnDemandPrices{Region: "eu-west-1", ObservedAt: t0, Source: OnDemandAPISource,
		Prices: shippedTimes(t, "eu-west-1", 1.05)}))
	loaded, err := NewStoredOnDemand(store, p, time.Minute, clk.Now).Load(ctx)
	require.NoError(t, err)
	assert.False(t, loaded)
	loaded, err = p.LoadOnDemand(OnDemandTable{Region: "eu-west-1", ObservedAt: t0, Source: OnDemandAPISource, Prices: shippedTimes(t, "eu-west-1", 1.05)})
	require.NoError(t, err)
	assert.False(t, loaded)
	assert.Equal(t, shipped.OnDemandTable().Prices, p.OnDemandTable().Prices, "the shipped table prices")
}
