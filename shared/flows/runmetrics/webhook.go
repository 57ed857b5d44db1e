package runmetrics

import (
	"io"
	"time"

	"github.com/nodewright/nodewright/shared/adapters/metrics"
)

// Webhook writes one webhook request as one record: webhook_requests_total and
// webhook_request_duration_seconds (from the request's arrival to its answer) by result, one of
// podwebhook's Result constants. An idle cluster calls the webhook for no Event, so writes nothing.
func Webhook(w io.Writer, cluster, result string, took time.Duration, at time.Time) error {
	e := newEmitter(w, cluster, at)
	e.values(map[string]float64{metrics.WebhookRequests: 1, metrics.WebhookDuration: took.Seconds()}, metrics.DimResult, result)
	return e.err
}
