package runmetrics

import (
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/nodewright/nodewright/shared/adapters/metrics"
)

func TestWebhookMetrics(t *testing.T) {
	recs := emitted(t, func(w io.Writer) error { return Webhook(w, "prod", "enqueued", 12*time.Millisecond, time.Now()) })
	assert.EqualValues(t, map[string]any{"enqueued": 1.0}, valuesOf(recs, metrics.WebhookRequests, metrics.DimResult))
	assert.InDelta(t, 0.012, valuesOf(recs, metrics.WebhookDuration, metrics.DimResult)["enqueued"], 1e-9)
}
