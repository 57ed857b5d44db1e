package state

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The region's spot price table is one item: pk PRICES, sk SPOT, with region, observedAt (unix ms), ttl
// and the prices gzip-compressed in a binary attribute (see spotpriceencoding.go). A full us-east-1 table
// (about 1,260 types × 6 zones) encodes to a few tens of KB, far under the item limit, so it is never split.
const (
	pricesPartition = "PRICES"
	spotPricesSort  = "SPOT"

	attrRegion     = "region"
	attrObservedAt = "observedAt"
	attrEncoding   = "encoding"
	attrPrices     = "prices"
)

// SpotPricesTTL is how long a stored table is trusted. The lifecycle function rewrites it every minute,
// so a table this old means refreshing has stopped; readers then keep what they hold (or read EC2
// themselves) rather than price on day-old data.
const SpotPricesTTL = 12 * time.Hour

// SpotPrices is a region's spot price table as read from EC2 at ObservedAt: instance type → zone → hourly
// price in the region's currency (CNY in China, else USD).
type SpotPrices struct {
	Region     string
	ObservedAt time.Time
	Prices     map[string]map[string]float64
}

// validate names the first field that makes sp unfit to store.
func (sp SpotPrices) validate() error {
	if sp.Region == "" {
		return fmt.Errorf("spot prices: region is required: %w", ErrInvalid)
	}
	if sp.ObservedAt.IsZero() {
		return fmt.Errorf("spot prices for %s: observedAt is required: %w", sp.Region, ErrInvalid)
	}
	if len(sp.Prices) == 0 {
		return fmt.Errorf("spot prices for %s: prices is empty (an empty table would replace a real one): %w", sp.Region, ErrInvalid)
	}
	for it, zones := range sp.Prices {
		if it == "" {
			return fmt.Errorf("spot prices for %s: an instance type name is empty: %w", sp.Region, ErrInvalid)
		}
		for zone, v := range zones {
			if zone == "" {
				return fmt.Errorf("spot prices for %s: prices[%s] has an empty zone name: %w", sp.Region, it, ErrInvalid)
			}
			if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
				return fmt.Errorf("spot prices for %s: prices[%s][%s] is %v, not a positive hourly price: %w", sp.Region, it, zone, v, ErrInvalid)
			}
		}
	}
	return nil
}

// PutSpotPrices stores the region's spot price table for SpotPricesTTL. The write is conditional: a table
// observed at or before the stored one's time changes nothing and is not an error, so writers that finish
// out of order leave the newest observation. An expired table is overwritten whatever its time.
func (s *Store) PutSpotPrices(ctx context.Context, sp SpotPrices) error {
	if err := sp.validate(); err != nil {
		return err
	}
	blob, err := encodeSpotPrices(sp.Prices)
	if err != nil {
		return fmt.Errorf("encoding spot prices for %s: %w", sp.Region, err)
	}
	return s.putPriceItem(ctx, priceItem{sort: spotPricesSort, what: "spot prices", region: sp.Region, observedAt: sp.ObservedAt,
		blob: blob, types: len(sp.Prices), ttl: SpotPricesTTL})
}

// SpotPrices reads the stored spot price table; ErrNotFound when none was stored or it has expired. The
// read is eventually consistent: a table a second old prices launches as well as the newest.
func (s *Store) SpotPrices(ctx context.Context) (SpotPrices, error) {
	item, err := s.getPriceItem(ctx, spotPricesSort, "spot prices")
	if err != nil {
		return SpotPrices{}, err
	}
	sp, err := decodeSpotPriceItem(item)
	if err != nil {
		return SpotPrices{}, fmt.Errorf("decoding stored spot prices: %w", err)
	}
	return sp, nil
}

func decodeSpotPriceItem(item map[string]types.AttributeValue) (SpotPrices, error) {
	region, ok := item[attrRegion].(*types.AttributeValueMemberS)
	if !ok {
		return SpotPrices{}, errors.New("attribute region missing or not a string")
	}
	at, err := numberAttr(item, attrObservedAt)
	if err != nil {
		return SpotPrices{}, err
	}
	if enc, ok := item[attrEncoding].(*types.AttributeValueMemberS); !ok || enc.Value != spotPriceEncoding {
		return SpotPrices{}, fmt.Errorf("attribute encoding is not %q", spotPriceEncoding)
	}
	blob, ok := item[attrPrices].(*types.AttributeValueMemberB)
	if !ok {
		return SpotPrices{}, errors.New("attribute prices missing or not binary")
	}
	prices, err := decodeSpotPrices(blob.Value)
	if err != nil {
		return SpotPrices{}, err
	}
	return SpotPrices{Region: region.Value, ObservedAt: time.UnixMilli(at).UTC(), Prices: prices}, nil
}
