package main

import (
	"context"
	"time"

	"github.com/nodewright/nodewright/shared/adapters/pricing"
)

// onDemandRefresher keeps the stored on-demand table current; *pricing.OnDemandRefresher satisfies it.
type onDemandRefresher interface {
	Refresh(ctx context.Context) (pricing.OnDemandRefresh, error)
}

var _ onDemandRefresher = (*pricing.OnDemandRefresher)(nil)

// onDemandRefreshTimeout bounds one Pricing API read, every page and throttling retry included. A region's
// table is about ten pages of 100 documents; 40 s leaves room for throttling and still ends well inside
// the lifecycle function's 60 s, beside the passes rather than in their way.
const onDemandRefreshTimeout = 40 * time.Second

// onDemandRefreshMargin is kept free before the invocation's deadline so the handler can log and return.
const onDemandRefreshMargin = 5 * time.Second

// onDemandRefreshContext bounds the refresh by onDemandRefreshTimeout and by the invocation's deadline
// less onDemandRefreshMargin, whichever comes first.
func onDemandRefreshContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if deadline, ok := ctx.Deadline(); ok {
		if d := deadline.Add(-onDemandRefreshMargin); time.Until(d) < onDemandRefreshTimeout {
			return context.WithDeadline(ctx, d)
		}
	}
	return context.WithTimeout(ctx, onDemandRefreshTimeout)
}
