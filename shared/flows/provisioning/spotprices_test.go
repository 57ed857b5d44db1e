package provisioning

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/pricing"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// countingSpotReader reads spot prices from next (or fails with err) and counts the reads.
type countingSpotReader struct {
	next  SpotPriceReader
	err   error
	reads int
}

func (r *countingSpotReader) SpotPrices(ctx context.Context) (state.SpotPrices, error) {
	r.reads++
	if r.err != nil {
		return state.SpotPrices{}, r.err
	}
	return r.next.SpotPrices(ctx)
}

// fixedSpotPrices is a stored table, or nothing stored when Region is empty.
type fixedSpotPrices state.SpotPrices

func (f *fixedSpotPrices) SpotPrices(context.Context) (state.SpotPrices, error) {
	if f.Region == "" {
		return state.SpotPrices{}, fmt.Errorf("spot prices: %w", state.ErrNotFound)
	}
	return state.SpotPrices(*f), nil
}

// testClock is a settable clock.
type testClock struct{ t time.Time }

func (c *testClock) Now() time.Time { return c.t }

func TestStoredSpotPricesAreReadAtMostOncePerInterval(t *testing.T) {
	ctx := context.Background()
	clk := &testClock{t: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)}
	stored := &fixedSpotPrices{}
	r := &countingSpotReader{next: stored}
	prices, err := pricing.NewProvider("us-east-1")
	require.NoError(t, err)
	s := NewStoredSpotPrices(r, prices, 0, clk.Now)

	loaded, err := s.Load(ctx)
	require.NoError(t, err, "nothing stored is not an error")
	assert.False(t, loaded)
	od, _ := prices.OnDemand("m5.large")
	v, _ := prices.Spot("m5.large", "us-east-1a")
	assert.InDelta(t, od, v, 1e-12, "spot stays at on-demand until a price is known")

	*stored = fixedSpotPrices{Region: "us-east-1", ObservedAt: clk.t, Prices: map[string]map[string]float64{"m5.large": {"us-east-1a": 0.0391}}}
	clk.t = clk.t.Add(59 * time.Second)
	loaded, err = s.Load(ctx)
	require.NoError(t, err)
	assert.False(t, loaded, "within the minute the table is not read again")
	assert.Equal(t, 1, r.reads)

	clk.t = clk.t.Add(time.Second)
	loaded, err = s.Load(ctx)
	require.NoError(t, err)
	assert.True(t, loaded)
	assert.Equal(t, 2, r.reads)
	v, _ = prices.Spot("m5.large", "us-east-1a")
	assert.InDelta(t, 0.0391, v, 1e-12)

	clk.t = clk.t.Add(time.Minute)
	loaded, err = s.Load(ctx)
	require.NoError(t, err)
	assert.False(t, loaded, "the same table again changes nothing")

	r.err = errors.New("reading spot prices: throttled")
	clk.t = clk.t.Add(time.Minute)
	_, err = s.Load(ctx)
	require.ErrorContains(t, err, "throttled")
	_, err = s.Load(ctx)
	require.NoError(t, err, "a failed read is not retried before the minute is over")
	assert.Equal(t, 4, r.reads)
	v, _ = prices.Spot("m5.large", "us-east-1a")
	assert.InDelta(t, 0.0391, v, 1e-12, "a failed read keeps the prices held")

	r.err = nil
	*stored = fixedSpotPrices{Region: "eu-west-1", ObservedAt: clk.t, Prices: map[string]map[string]float64{"m5.large": {"eu-west-1a": 0.05}}}
	clk.t = clk.t.Add(time.Minute)
	_, err = s.Load(ctx)
	require.ErrorIs(t, err, pricing.ErrWrongRegion)
	assert.ErrorContains(t, err, "loading the stored spot prices")
}

func TestRunPricesSpotFromTheStoredTable(t *testing.T) {
	ctx := context.Background()
	w := newTestProvisioner(t, fakeCluster{snap: pendingSnapshot(pod("a", nil), pod("b", nil))})
	prices, err := pricing.NewProvider("us-east-1")
	require.NoError(t, err)
	require.NoError(t, w.store.PutSpotPrices(ctx, state.SpotPrices{Region: "us-east-1", ObservedAt: time.Now(),
		Prices: map[string]map[string]float64{"m5.xlarge": {"us-east-1a": 0.0734}}}))
	reader := &countingSpotReader{next: w.store}
	w.p.deps.Prices = prices
	w.p.deps.SpotPrices = NewStoredSpotPrices(reader, prices, DefaultSpotPricesEvery, time.Now)

	rep, err := w.p.Run(ctx, "run-1")
	require.NoError(t, err)
	assert.Empty(t, rep.Errors)
	require.Len(t, rep.Claims, 1)
	assert.Equal(t, "spot", rep.Claims[0].CapacityType)
	assert.InDelta(t, 0.0734, rep.Claims[0].Price, 1e-12, "the run priced spot from the table the lifecycle function stored")
	require.Len(t, w.ec2.requests, 1)
	require.NotEmpty(t, w.ec2.requests[0].Overrides)
	assert.InDelta(t, 0.0734, w.ec2.requests[0].Overrides[0].Price, 1e-12)

	_, err = w.p.Run(ctx, "run-2")
	require.NoError(t, err)
	assert.Equal(t, 1, reader.reads, "a warm container reads the table at most once a minute, not per run or launch")
}

func TestRunGoesOnWhenStoredSpotPricesCannotBeRead(t *testing.T) {
	w := newTestProvisioner(t, fakeCluster{snap: pendingSnapshot(pod("a", nil))})
	prices, err := pricing.NewProvider("us-east-1")
	require.NoError(t, err)
	w.p.deps.Prices = prices
	w.p.deps.SpotPrices = NewStoredSpotPrices(&countingSpotReader{err: errors.New("reading spot prices: AccessDenied")}, prices, 0, time.Now)

	rep, err := w.p.Run(context.Background(), "run-1")
	require.NoError(t, err, "stale or on-demand spot prices are safe to decide on")
	assert.Contains(t, rep.Errors, "spot prices: reading spot prices: AccessDenied (pricing with the ones held)")
	require.Len(t, rep.Claims, 1, "the pod still gets a node")
	od, _ := prices.OnDemand("m5.xlarge")
	assert.InDelta(t, od, rep.Claims[0].Price, 1e-12, "spot unknown: priced at on-demand")
}
