package state

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The region's on-demand price table is one item beside the spot table: pk PRICES, sk ONDEMAND, with
// region, observedAt (unix ms), source, ttl and the prices (instance type → hourly price in the region's
// currency: CNY in China, else USD) gzip-compressed in a binary attribute. A region's ~1,400 types
// encode to a few KB.
const (
	onDemandPricesSort = "ONDEMAND"
	attrSource         = "source"
)

// OnDemandPricesTTL is how long a stored on-demand table is trusted. The lifecycle function rewrites it
// every 12 hours; list prices change a few times a year, so a table kept through days of Pricing API
// failures is still closer to the truth than the shipped one, which readers fall back to after this.
const OnDemandPricesTTL = 30 * 24 * time.Hour

// OnDemandPrices is a region's on-demand price table as read at ObservedAt from Source (for example the
// AWS Pricing API): instance type → hourly price in the region's currency (CNY in China, else USD).
type OnDemandPrices struct {
	Region     string
	ObservedAt time.Time
	Source     string
	Prices     map[string]float64
}

// validate names the first field that makes op unfit to store.
func (op OnDemandPrices) validate() error {
	switch {
	case op.Region == "":
		return fmt.Errorf("on-demand prices: region is required: %w", ErrInvalid)
	case op.ObservedAt.IsZero():
		return fmt.Errorf("on-demand prices for %s: observedAt is required: %w", op.Region, ErrInvalid)
	case op.Source == "":
		return fmt.Errorf("on-demand prices for %s: source is required: %w", op.Region, ErrInvalid)
	case len(op.Prices) == 0:
		return fmt.Errorf("on-demand prices for %s: prices is empty (an empty table would replace a real one): %w", op.Region, ErrInvalid)
	}
	for it, v := range op.Prices {
		if it == "" {
			return fmt.Errorf("on-demand prices for %s: an instance type name is empty: %w", op.Region, ErrInvalid)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
			return fmt.Errorf("on-demand prices for %s: prices[%s] is %v, not a positive hourly price: %w", op.Region, it, v, ErrInvalid)
		}
	}
	return nil
}

// PutOnDemandPrices stores the region's on-demand price table for OnDemandPricesTTL. As with spot prices
// the write is conditional: a table observed at or before the stored one's time changes nothing and is
// not an error; an expired table is overwritten whatever its time.
func (s *Store) PutOnDemandPrices(ctx context.Context, op OnDemandPrices) error {
	if err := op.validate(); err != nil {
		return err
	}
	blob, err := encodeGzipJSON(op.Prices)
	if err != nil {
		return fmt.Errorf("encoding on-demand prices for %s: %w", op.Region, err)
	}
	return s.putPriceItem(ctx, priceItem{sort: onDemandPricesSort, what: "on-demand prices", region: op.Region, source: op.Source,
		observedAt: op.ObservedAt, blob: blob, types: len(op.Prices), ttl: OnDemandPricesTTL})
}

// OnDemandPrices reads the stored on-demand price table; ErrNotFound when none was stored or it has
// expired. The read is eventually consistent, which a table rewritten twice a day does not notice.
func (s *Store) OnDemandPrices(ctx context.Context) (OnDemandPrices, error) {
	item, err := s.getPriceItem(ctx, onDemandPricesSort, "on-demand prices")
	if err != nil {
		return OnDemandPrices{}, err
	}
	op, err := decodeOnDemandPriceItem(item)
	if err != nil {
		return OnDemandPrices{}, fmt.Errorf("decoding stored on-demand prices: %w", err)
	}
	return op, nil
}

func decodeOnDemandPriceItem(item map[string]types.AttributeValue) (OnDemandPrices, error) {
	region, ok := item[attrRegion].(*types.AttributeValueMemberS)
	if !ok {
		return OnDemandPrices{}, errors.New("attribute region missing or not a string")
	}
	source, ok := item[attrSource].(*types.AttributeValueMemberS)
	if !ok {
		return OnDemandPrices{}, errors.New("attribute source missing or not a string")
	}
	at, err := numberAttr(item, attrObservedAt)
	if err != nil {
		return OnDemandPrices{}, err
	}
	if enc, ok := item[attrEncoding].(*types.AttributeValueMemberS); !ok || enc.Value != spotPriceEncoding {
		return OnDemandPrices{}, fmt.Errorf("attribute encoding is not %q", spotPriceEncoding)
	}
	blob, ok := item[attrPrices].(*types.AttributeValueMemberB)
	if !ok {
		return OnDemandPrices{}, errors.New("attribute prices missing or not binary")
	}
	var prices map[string]float64
	if err := decodeGzipJSON(blob.Value, &prices); err != nil {
		return OnDemandPrices{}, err
	}
	return OnDemandPrices{Region: region.Value, ObservedAt: time.UnixMilli(at).UTC(), Source: source.Value, Prices: prices}, nil
}
