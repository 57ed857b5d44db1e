package scalebench

import (
	"context"
	"io"
	"math"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	"k8s.io/client-go/rest"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

// ByteCounter counts the response body bytes a client read from the API server.
type ByteCounter struct{ n atomic.Int64 }

// Wrap makes cfg's transport count into c.
func (c *ByteCounter) Wrap(cfg *rest.Config) {
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &countingTransport{next: rt, n: &c.n} })
}

// Load is the count so far; Reset starts again from zero.
func (c *ByteCounter) Load() int64 { return c.n.Load() }
func (c *ByteCounter) Reset()      { c.n.Store(0) }

type countingTransport struct {
	next http.RoundTripper
	n    *atomic.Int64
}

func (t *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err == nil && resp.Body != nil {
		resp.Body = &countingBody{ReadCloser: resp.Body, n: t.n}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// ReadUnits counts the DynamoDB read capacity the calls through a configuration consume, computed from
// the items each read returned as DynamoDB bills them: 1 unit per 4 KB strongly consistent (a Query or
// Scan page summed before rounding, GetItem and BatchGetItem per item), half that eventually consistent
// (every index read), twice for TransactGetItems. moto reports a constant per call instead of what was
// read, so its ConsumedCapacity is not used. Items a Query's filter dropped are not seen (and not
// counted); Nodewright's reads use key conditions.
type ReadUnits struct {
	mu    sync.Mutex
	units float64
}

// Instrument adds the counting middleware to cfg's DynamoDB clients.
func (u *ReadUnits) Instrument(cfg *aws.Config) {
	cfg.APIOptions = append(cfg.APIOptions, func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("scalebenchReadUnits",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				out, md, err := next.HandleInitialize(ctx, in)
				if err == nil {
					u.add(readUnits(in.Parameters, out.Result))
				}
				return out, md, err
			}), middleware.After)
	})
}

func (u *ReadUnits) add(x float64) {
	u.mu.Lock()
	u.units += x
	u.mu.Unlock()
}

// Load is the count so far; Reset starts again from zero.
func (u *ReadUnits) Load() float64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.units
}
func (u *ReadUnits) Reset() {
	u.mu.Lock()
	u.units = 0
	u.mu.Unlock()
}

// readUnits is what one call consumed.
func readUnits(params, result any) float64 {
	factor := func(consistent *bool) float64 {
		if consistent != nil && *consistent {
			return 1
		}
		return 0.5
	}
	perItem := func(items ...map[string]types.AttributeValue) float64 {
		total := 0.0
		for _, it := range items {
			total += math.Max(1, math.Ceil(float64(state.ItemSize(it))/4096))
		}
		return total
	}
	summed := func(items []map[string]types.AttributeValue) float64 {
		size := 0
		for _, it := range items {
			size += state.ItemSize(it)
		}
		return math.Max(1, math.Ceil(float64(size)/4096))
	}
	switch out := result.(type) {
	case *dynamodb.GetItemOutput:
		in, _ := params.(*dynamodb.GetItemInput)
		if in == nil {
			return 0
		}
		if out.Item == nil {
			return factor(in.ConsistentRead)
		}
		return perItem(out.Item) * factor(in.ConsistentRead)
	case *dynamodb.QueryOutput:
		in, _ := params.(*dynamodb.QueryInput)
		if in == nil {
			return 0
		}
		return summed(out.Items) * factor(in.ConsistentRead)
	case *dynamodb.ScanOutput:
		in, _ := params.(*dynamodb.ScanInput)
		if in == nil {
			return 0
		}
		return summed(out.Items) * factor(in.ConsistentRead)
	case *dynamodb.BatchGetItemOutput:
		in, _ := params.(*dynamodb.BatchGetItemInput)
		total := 0.0
		for table, items := range out.Responses {
			var consistent *bool
			if in != nil {
				consistent = in.RequestItems[table].ConsistentRead
			}
			total += perItem(items...) * factor(consistent)
		}
		return total
	case *dynamodb.TransactGetItemsOutput:
		total := 0.0
		for _, r := range out.Responses {
			total += 2 * perItem(r.Item)
		}
		return total
	}
	return 0
}
