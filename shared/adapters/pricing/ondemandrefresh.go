package pricing

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

// OnDemandRefreshEvery is how often the lifecycle function reads on-demand prices from the Pricing API.
// It is Karpenter's cadence: its pricing controller (aws/karpenter-provider-aws,
// pkg/controllers/providers/pricing/controller.go) updates spot and on-demand prices and requeues after
// 12 hours. List prices change a few times a year, so a faster cadence only spends API quota.
const OnDemandRefreshEvery = 12 * time.Hour

// OnDemandRetryAfter is how long a container waits after a failed Pricing API read before it tries again,
// so an outage or a missing permission costs one attempt per quarter hour, not one per lifecycle minute.
const OnDemandRetryAfter = 15 * time.Minute

// OnDemandStore keeps the on-demand table for the other functions; *state.Store satisfies it. Reading
// returns an error satisfying state.IsNotFound when nothing (or nothing current) is stored.
type OnDemandStore interface {
	OnDemandPrices(ctx context.Context) (state.OnDemandPrices, error)
	PutOnDemandPrices(ctx context.Context, op state.OnDemandPrices) error
}

var _ OnDemandStore = (*state.Store)(nil)

// OnDemandRefresher keeps the stored on-demand table current: at most every OnDemandRefreshEvery it reads
// the Pricing API into a Provider and, when the answer is complete and sane, stores it. It is safe for
// concurrent use; refreshes do not overlap.
type OnDemandRefresher struct {
	prices *Provider
	src    OnDemandSource
	store  OnDemandStore
	now    func() time.Time

	mu          sync.Mutex
	lastFailure time.Time
}

// NewOnDemandRefresher refreshes prices from src into store on the clock now.
func NewOnDemandRefresher(prices *Provider, src OnDemandSource, store OnDemandStore, now func() time.Time) *OnDemandRefresher {
	return &OnDemandRefresher{prices: prices, src: src, store: store, now: now}
}

// OnDemandRefresh says what one Refresh did, for the caller's log line.
type OnDemandRefresh struct {
	// Refreshed is true when the Pricing API was read and its table stored.
	Refreshed bool
	// Skipped says why the API was not read ("" when it was).
	Skipped string
	// Source is where the prices held now come from (Provider.OnDemandSourceInfo).
	Source string
	// Types is how many instance types the prices held cover.
	Types int
}

// Refresh reads the Pricing API when neither the prices held nor the stored table are younger than
// OnDemandRefreshEvery and no read failed in the last OnDemandRetryAfter, then stores what it read. A
// failed or refused read keeps the prices held and the stored table (the last good read, or the shipped
// table when there is none) and is returned for the caller to log with the reason. ctx bounds the whole
// refresh, every page and retry included. For an isolated provider (Isolate), and in GovCloud, which has
// no Pricing API (as Karpenter, which skips the read there), it reads nothing: the shipped table prices.
func (r *OnDemandRefresher) Refresh(ctx context.Context) (OnDemandRefresh, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.prices.Isolated() {
		return r.result(IsolatedNote), nil
	}
	if !HasPricingAPI(r.prices.region) {
		return r.result(NoPricingAPINote), nil
	}
	now := r.now()
	if r.fresh(now) {
		return r.result("the prices held are younger than 12h"), nil
	}
	var errs []error
	stored, err := r.store.OnDemandPrices(ctx)
	switch {
	case state.IsNotFound(err):
	case err != nil:
		errs = append(errs, err)
	default:
		if _, err := r.prices.LoadOnDemand(OnDemandTable(stored)); err != nil {
			errs = append(errs, fmt.Errorf("the stored table was not taken: %w", err))
		}
		if r.fresh(now) {
			return r.result("the stored table is younger than 12h"), errors.Join(errs...)
		}
	}
	if !r.lastFailure.IsZero() && now.Sub(r.lastFailure) < OnDemandRetryAfter {
		return r.result("a read failed less than 15m ago"), errors.Join(errs...)
	}
	if err := r.prices.RefreshOnDemand(ctx, r.src, now); err != nil {
		r.lastFailure = now
		return r.result("the Pricing API read failed"), errors.Join(append(errs, err)...)
	}
	r.lastFailure = time.Time{}
	t := r.prices.OnDemandTable()
	if err := r.store.PutOnDemandPrices(ctx, state.OnDemandPrices{Region: t.Region, ObservedAt: t.ObservedAt, Source: OnDemandAPISource, Prices: t.Prices}); err != nil {
		errs = append(errs, fmt.Errorf("on-demand prices were read but not stored for the other functions: %w", err))
	}
	out := r.result("")
	out.Refreshed = true
	return out, errors.Join(errs...)
}

func (r *OnDemandRefresher) fresh(now time.Time) bool {
	at := r.prices.OnDemandTable().ObservedAt
	return !at.IsZero() && now.Sub(at) < OnDemandRefreshEvery
}

func (r *OnDemandRefresher) result(skipped string) OnDemandRefresh {
	return OnDemandRefresh{Skipped: skipped, Source: r.prices.OnDemandSourceInfo(), Types: len(r.prices.InstanceTypes())}
}
