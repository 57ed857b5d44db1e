package pricing

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/testsupport/awstest"
)

var t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// shippedTimes returns the shipped prices for region multiplied by factor: a complete answer whose
// prices differ from the shipped ones.
func shippedTimes(t *testing.T, region string, factor float64) map[string]float64 {
	t.Helper()
	table, err := LoadStatic()
	require.NoError(t, err)
	out := map[string]float64{}
	for name, v := range table.Regions[region] {
		out[name] = math.Round(v*factor*1e6) / 1e6
	}
	return out
}

func TestRefreshOnDemandTakesACompleteAnswer(t *testing.T) {
	want := shippedTimes(t, "eu-west-1", 1.02)
	srv := newPriceListServer(t, syntheticPages("eu-west-1", want, apiPageSize))
	p, err := NewProvider("eu-west-1")
	require.NoError(t, err)
	require.NoError(t, p.RefreshOnDemand(context.Background(), APISource{API: srv.client("eu-west-1")}, t0))
	got := p.OnDemandTable()
	assert.Equal(t, want, got.Prices)
	assert.Equal(t, t0, got.ObservedAt)
	assert.Equal(t, "AWS Pricing API for eu-west-1 observed 2026-11-22T12:00:00Z", p.OnDemandSourceInfo())
	// Count pages, not requests: on a loaded machine the SDK may send a page's request again after a
	// transport error, which the server records twice.
	assert.Len(t, srv.tokensAsked(), (len(want)+apiPageSize-1)/apiPageSize, "every page read")
}

func TestRefreshOnDemandRefusesAPartialAnswer(t *testing.T) {
	srv := newPriceListServer(t, recordedPages(t)) // six types: a sane document set, but not a region
	p, err := NewProvider("eu-west-1")
	require.NoError(t, err)
	before := p.OnDemandSourceInfo()
	err = p.RefreshOnDemand(context.Background(), APISource{API: srv.client("eu-west-1")}, t0)
	require.ErrorIs(t, err, ErrImplausiblePrices)
	assert.ErrorContains(t, err, "6 instance types priced, fewer than 386 (half of the 772 in the shipped table)")
	assert.Equal(t, before, p.OnDemandSourceInfo())
	v, _ := p.OnDemand("m5.large")
	assert.InDelta(t, 0.107, v, 1e-9, "the shipped price stays")
}

func TestLoadOnDemandRefusesWhatMustNotReplacePrices(t *testing.T) {
	complete := func(edit func(map[string]float64)) map[string]float64 {
		m := shippedTimes(t, "us-east-2", 1)
		edit(m)
		return m
	}
	for name, tc := range map[string]struct {
		table OnDemandTable
		want  error
		text  string
	}{
		"another region": {OnDemandTable{Region: "us-west-2", ObservedAt: t0, Prices: complete(func(map[string]float64) {})}, ErrWrongRegion, ""},
		"no time":        {OnDemandTable{Region: "us-east-2", Prices: complete(func(map[string]float64) {})}, nil, "observedAt is missing"},
		"zero":           {OnDemandTable{Region: "us-east-2", ObservedAt: t0, Prices: complete(func(m map[string]float64) { m["m5.large"] = 0 })}, ErrImplausiblePrices, "m5.large is priced 0"},
		"negative":       {OnDemandTable{Region: "us-east-2", ObservedAt: t0, Prices: complete(func(m map[string]float64) { m["m5.large"] = -0.1 })}, ErrImplausiblePrices, "m5.large is priced -0.1"},
		"NaN":            {OnDemandTable{Region: "us-east-2", ObservedAt: t0, Prices: complete(func(m map[string]float64) { m["m5.large"] = math.NaN() })}, ErrImplausiblePrices, "priced NaN"},
		"infinite":       {OnDemandTable{Region: "us-east-2", ObservedAt: t0, Prices: complete(func(m map[string]float64) { m["m5.large"] = math.Inf(1) })}, ErrImplausiblePrices, "priced +Inf"},
		"empty name":     {OnDemandTable{Region: "us-east-2", ObservedAt: t0, Prices: complete(func(m map[string]float64) { m[""] = 1 })}, ErrImplausiblePrices, "name is empty"},
		"far too few":    {OnDemandTable{Region: "us-east-2", ObservedAt: t0, Prices: map[string]float64{"m5.large": 0.096}}, ErrImplausiblePrices, "1 instance types priced, fewer than 406"},
	} {
		t.Run(name, func(t *testing.T) {
			p, err := NewProvider("us-east-2")
			require.NoError(t, err)
			before := p.OnDemandTable()
			loaded, err := p.LoadOnDemand(tc.table)
			require.Error(t, err)
			assert.False(t, loaded)
			if tc.want != nil {
				assert.ErrorIs(t, err, tc.want)
			}
			assert.ErrorContains(t, err, tc.text)
			assert.Equal(t, before, p.OnDemandTable(), "the prices held stay")
		})
	}

	p, err := NewProvider("us-east-2")
	require.NoError(t, err)
	loaded, err := p.LoadOnDemand(OnDemandTable{Region: "us-east-2", ObservedAt: t0, Source: "AWS Pricing API", Prices: shippedTimes(t, "us-east-2", 1.1)})
	require.NoError(t, err)
	assert.True(t, loaded)
	loaded, err = p.LoadOnDemand(OnDemandTable{Region: "us-east-2", ObservedAt: t0.Add(-time.Hour), Source: "AWS Pricing API", Prices: shippedTimes(t, "us-east-2", 2)})
	require.NoError(t, err)
	assert.False(t, loaded, "an older table does not replace a newer one")
	v, _ := p.OnDemand("m5.large")
	assert.InDelta(t, 0.1056, v, 1e-9)
}

func TestUncoveredRegionJudgesAFreshReadByTheSmallestRegion(t *testing.T) {
	p, err := NewProvider("ap-east-2")
	require.NoError(t, err)
	table, err := LoadStatic()
	require.NoError(t, err)
	smallest := len(table.Regions["ap-southeast-4"]) // 176 types, the fewest of any covered region
	assert.Equal(t, smallest, p.knownTypes)
}

// newStateStore creates a state table in the shared moto and returns a store over it.
func newStateStore(t *testing.T) *state.Store {
	t.Helper()
	return newStateStoreOn(t, awstest.Shared(t))
}

func newStateStoreOn(t *testing.T, moto *awstest.Moto) *state.Store {
	t.Helper()
	db := state.NewClient(moto.Config())
	_, err := db.CreateTable(context.Background(), state.CreateTableInput("state"))
	require.NoError(t, err)
	return state.New(db, "state")
}

// clock is a settable time source.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

func TestRefresherReadsTheAPIOnKarpentersCadenceAndStoresTheTable(t *testing.T) {
	ctx := context.Background()
	store := newStateStore(t)
	want := shippedTimes(t, "eu-west-1", 1.02)
	srv := newPriceListServer(t, syntheticPages("eu-west-1", want, apiPageSize))
	clk := &clock{now: t0}
	lifecycle, err := NewProvider("eu-west-1")
	require.NoError(t, err)
	r := NewOnDemandRefresher(lifecycle, APISource{API: srv.client("eu-west-1")}, store, clk.Now)
	requests := func() int { reqs, _ := srv.recorded(); return len(reqs) }

	res, err := r.Refresh(ctx)
	require.NoError(t, err)
	assert.True(t, res.Refreshed)
	assert.Equal(t, "AWS Pricing API for eu-west-1 observed 2026-11-22T12:00:00Z", res.Source)
	assert.Equal(t, len(want), res.Types)
	stored, err := store.OnDemandPrices(ctx)
	require.NoError(t, err)
	assert.Equal(t, state.OnDemandPrices{Region: "eu-west-1", ObservedAt: t0, Source: "AWS Pricing API", Prices: want}, stored)
	pages := requests()

	clk.now = t0.Add(11 * time.Hour)
	res, err = r.Refresh(ctx)
	require.NoError(t, err)
	assert.Equal(t, "the prices held are younger than 12h", res.Skipped)
	assert.Equal(t, pages, requests(), "no API call inside the 12 h")

	// A cold container takes the stored table instead of calling the API.
	other, err := NewProvider("eu-west-1")
	require.NoError(t, err)
	res, err = NewOnDemandRefresher(other, APISource{API: srv.client("eu-west-1")}, store, clk.Now).Refresh(ctx)
	require.NoError(t, err)
	assert.Equal(t, "the stored table is younger than 12h", res.Skipped)
	assert.Equal(t, pages, requests())
	assert.Equal(t, want, other.OnDemandTable().Prices)

	// After 12 h the API is read again; a failed read keeps the stored table and the prices held.
	clk.now = t0.Add(12 * time.Hour)
	srv.failWith["token-3"] = "AccessDeniedException"
	res, err = r.Refresh(ctx)
	require.Error(t, err)
	assert.ErrorContains(t, err, "AccessDeniedException")
	assert.ErrorContains(t, err, "keeping AWS Pricing API for eu-west-1 observed 2026-11-22T12:00:00Z")
	assert.False(t, res.Refreshed)
	assert.Equal(t, "AWS Pricing API for eu-west-1 observed 2026-11-22T12:00:00Z", res.Source)
	stored, err = store.OnDemandPrices(ctx)
	require.NoError(t, err)
	assert.Equal(t, t0, stored.ObservedAt, "nothing stored after a failed read")

	// The next attempt waits OnDemandRetryAfter, then succeeds.
	failed := requests()
	clk.now = clk.now.Add(10 * time.Minute)
	res, err = r.Refresh(ctx)
	require.NoError(t, err)
	assert.Equal(t, "a read failed less than 15m ago", res.Skipped)
	assert.Equal(t, failed, requests())
	delete(srv.failWith, "token-3")
	clk.now = clk.now.Add(5 * time.Minute)
	res, err = r.Refresh(ctx)
	require.NoError(t, err)
	assert.True(t, res.Refreshed)
	stored, err = store.OnDemandPrices(ctx)
	require.NoError(t, err)
	assert.Equal(t, t0.Add(12*time.Hour+15*time.Minute), stored.ObservedAt)
}

func TestRefresherNeverStoresARefusedAnswer(t *testing.T) {
	ctx := context.Background()
	store := newStateStore(t)
	srv := newPriceListServer(t, recordedPages(t))
	p, err := NewProvider("eu-west-1")
	require.NoError(t, err)
	res, err := NewOnDemandRefresher(p, APISource{API: srv.client("eu-west-1")}, store, func() time.Time { return t0 }).Refresh(ctx)
	require.ErrorIs(t, err, ErrImplausiblePrices)
	assert.Contains(t, res.Source, "static table for eu-west-1")
	_, err = store.OnDemandPrices(ctx)
	assert.True(t, state.IsNotFound(err), "a partial answer is not stored: %v", err)
}

func TestStoredOnDemandFallsBackFromStoredToShipped(t *testing.T) {
	ctx := context.Background()
	moto := awstest.Shared(t)
	store := newStateStoreOn(t, moto)
	clk := &clock{now: t0}
	p, err := NewProvider("eu-west-1")
	require.NoError(t, err)
	s := NewStoredOnDemand(store, p, time.Minute, clk.Now)

	loaded, err := s.Load(ctx)
	require.NoError(t, err, "nothing stored is not an error")
	assert.False(t, loaded)
	assert.Contains(t, p.OnDemandSourceInfo(), "static table for eu-west-1", "the shipped table until one is stored")

	want := shippedTimes(t, "eu-west-1", 1.03)
	require.NoError(t, store.PutOnDemandPrices(ctx, state.OnDemandPrices{Region: "eu-west-1", ObservedAt: t0, Source: "AWS Pricing API", Prices: want}))
	clk.now = t0.Add(30 * time.Second)
	loaded, err = s.Load(ctx)
	require.NoError(t, err)
	assert.False(t, loaded, "read at most once a minute")
	clk.now = t0.Add(time.Minute)
	loaded, err = s.Load(ctx)
	require.NoError(t, err)
	assert.True(t, loaded)
	assert.Equal(t, "AWS Pricing API for eu-west-1 observed 2026-11-22T12:00:00Z", p.OnDemandSourceInfo())
	assert.Equal(t, want, p.OnDemandTable().Prices)

	// A partial table in the state table (written by something else) is refused; the prices held stay.
	require.NoError(t, store.PutOnDemandPrices(ctx, state.OnDemandPrices{Region: "eu-west-1", ObservedAt: t0.Add(time.Hour), Source: "AWS Pricing API",
		Prices: map[string]float64{"m5.large": 0.5}}))
	clk.now = t0.Add(2 * time.Minute)
	loaded, err = s.Load(ctx)
	require.ErrorIs(t, err, ErrImplausiblePrices)
	assert.ErrorContains(t, err, "pricing with AWS Pricing API for eu-west-1 observed 2026-11-22T12:00:00Z")
	assert.False(t, loaded)
	assert.Equal(t, want, p.OnDemandTable().Prices)

	// A state table that cannot be read leaves a new container on the shipped table.
	fresh, err := NewProvider("eu-west-1")
	require.NoError(t, err)
	missing := state.New(state.NewClient(moto.Config()), "no-such-table")
	_, err = NewStoredOnDemand(missing, fresh, 0, clk.Now).Load(ctx)
	require.Error(t, err)
	assert.Contains(t, fresh.OnDemandSourceInfo(), "static table for eu-west-1")
}

// countingLoader records the order loaders ran in.
type countingLoader struct {
	name   string
	order  *[]string
	loaded bool
	err    error
}

func (c countingLoader) Load(context.Context) (bool, error) {
	*c.order = append(*c.order, c.name)
	return c.loaded, c.err
}

func TestLoadersRunEveryLoaderInOrder(t *testing.T) {
	var order []string
	loaded, err := Loaders{
		countingLoader{name: "on-demand", order: &order, err: ErrImplausiblePrices},
		countingLoader{name: "spot", order: &order, loaded: true},
	}.Load(context.Background())
	assert.True(t, loaded)
	assert.ErrorIs(t, err, ErrImplausiblePrices)
	assert.Equal(t, []string{"on-demand", "spot"}, order, "spot runs after a failed on-demand load")
}
