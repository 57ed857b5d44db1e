package state

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// priceItem is the envelope of a stored price table (spot or on-demand): one item under pk PRICES whose
// prices are an encoded blob, kept for ttl.
type priceItem struct {
	sort, what     string // the item's sort key, and what the errors call it ("spot prices")
	region, source string // source may be empty
	observedAt     time.Time
	blob           []byte
	types          int // how many instance types the blob holds, for the size error
	ttl            time.Duration
}

// putPriceItem writes p unless a table observed at or after p's time is stored and not expired: writers
// that finish out of order leave the newest observation, and a lost race is not an error.
func (s *Store) putPriceItem(ctx context.Context, p priceItem) error {
	now := s.now()
	item := key(pricesPartition, p.sort)
	item[attrRegion] = str(p.region)
	item[attrObservedAt] = num(p.observedAt.UnixMilli())
	if p.source != "" {
		item[attrSource] = str(p.source)
	}
	item[attrEncoding] = str(spotPriceEncoding)
	item[attrPrices] = &types.AttributeValueMemberB{Value: p.blob}
	item[TTLAttribute] = num(now.Add(p.ttl).Unix())
	if n := ItemSize(item); n > maxItemBytes {
		return fmt.Errorf("%s for %s (%d types) are %d bytes encoded, over %d: %w", p.what, p.region, p.types, n, maxItemBytes, ErrItemTooLarge)
	}
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                aws.String(s.table),
		Item:                     item,
		ConditionExpression:      aws.String("attribute_not_exists(#pk) OR #at < :at OR #ttl <= :now"),
		ExpressionAttributeNames: map[string]string{"#pk": PartitionKey, "#at": attrObservedAt, "#ttl": TTLAttribute},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":at": num(p.observedAt.UnixMilli()), ":now": num(now.Unix()),
		},
	})
	if conditionFailed(err) {
		return nil // a newer (or the same) observation is stored
	}
	if err != nil {
		return fmt.Errorf("storing %s for %s: %w", p.what, p.region, err)
	}
	return nil
}

// getPriceItem reads the price table item under sort; ErrNotFound when none was stored or it has
// expired. The read is eventually consistent: a table a second old prices as well as the newest.
func (s *Store) getPriceItem(ctx context.Context, sort, what string) (map[string]types.AttributeValue, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: key(pricesPartition, sort)})
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", what, err)
	}
	if len(out.Item) == 0 {
		return nil, fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	if ttl, err := numberAttr(out.Item, TTLAttribute); err == nil && ttl <= s.now().Unix() {
		return nil, fmt.Errorf("%s: expired: %w", what, ErrNotFound)
	}
	return out.Item, nil
}
