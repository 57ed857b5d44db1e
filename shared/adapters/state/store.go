package state

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// DynamoDB is the part of the DynamoDB client the store uses; *dynamodb.Client satisfies it.
type DynamoDB interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
	Query(ctx context.Context, in *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
	BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
	BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
}

var _ DynamoDB = (*dynamodb.Client)(nil)

// Store reads and writes the state table.
type Store struct {
	db       DynamoDB
	table    string
	now      func() time.Time
	pageSize int32
	// view, when set (WithClaimsView), answers ListClaims.
	view *ClaimsView
	// priceNote, when set (WithPriceNote), is added to the decisions that rest on prices.
	priceNote string
}

// Option configures a Store.
type Option func(*Store)

// WithClock sets the clock used for TTLs, lease expiry and timestamps (default time.Now).
func WithClock(now func() time.Time) Option { return func(s *Store) { s.now = now } }

// WithPageSize caps the items per query page (default: DynamoDB's 1 MB pages).
func WithPageSize(n int32) Option { return func(s *Store) { s.pageSize = n } }

// New returns a store over table.
func New(db DynamoDB, table string, opts ...Option) *Store {
	s := &Store{db: db, table: table, now: time.Now}
	for _, o := range opts {
		o(s)
	}
	return s
}

// NewClient builds a DynamoDB client for the store from cfg with a retryer that rides out throttling:
// up to 8 attempts with exponential backoff capped at 5 s (the SDK default gives up after 3).
func NewClient(cfg aws.Config, optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	return dynamodb.NewFromConfig(cfg, append([]func(*dynamodb.Options){func(o *dynamodb.Options) {
		o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
			so.MaxAttempts = 8
			so.MaxBackoff = 5 * time.Second
		})
	}}, optFns...)...)
}

// key builds a primary key.
func key(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		PartitionKey: &types.AttributeValueMemberS{Value: pk},
		SortKey:      &types.AttributeValueMemberS{Value: sk},
	}
}

// marshalItem encodes v with its key, refusing items over maxItemBytes.
func marshalItem(pk, sk string, v any) (map[string]types.AttributeValue, error) {
	item, err := attributevalue.MarshalMap(v)
	if err != nil {
		return nil, fmt.Errorf("encoding %s/%s: %w", pk, sk, err)
	}
	for k, av := range key(pk, sk) {
		item[k] = av
	}
	if n := ItemSize(item); n > maxItemBytes {
		return nil, fmt.Errorf("%s/%s is %d bytes, over %d: %w", pk, sk, n, maxItemBytes, ErrItemTooLarge)
	}
	return item, nil
}

// queryAll runs a query to the end, following LastEvaluatedKey, and decodes every item into T.
func queryAll[T any](ctx context.Context, db DynamoDB, in *dynamodb.QueryInput) ([]T, error) {
	var out []T
	p := dynamodb.NewQueryPaginator(db, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		batch := make([]T, 0, len(page.Items))
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &batch); err != nil {
			return nil, fmt.Errorf("decoding query page: %w", err)
		}
		out = append(out, batch...)
	}
	return out, nil
}

// partition returns the query input for every item of one partition (optionally one sort-key prefix).
func (s *Store) partition(pk, skPrefix string) *dynamodb.QueryInput {
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    aws.String("#pk = :pk"),
		ExpressionAttributeNames:  map[string]string{"#pk": PartitionKey},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: pk}},
		ConsistentRead:            aws.Bool(true),
	}
	if s.pageSize > 0 {
		in.Limit = aws.Int32(s.pageSize)
	}
	if skPrefix != "" {
		in.KeyConditionExpression = aws.String("#pk = :pk AND begins_with(#sk, :prefix)")
		in.ExpressionAttributeNames["#sk"] = SortKey
		in.ExpressionAttributeValues[":prefix"] = &types.AttributeValueMemberS{Value: skPrefix}
	}
	return in
}

func num(n int64) *types.AttributeValueMemberN {
	return &types.AttributeValueMemberN{Value: fmt.Sprint(n)}
}

func str(v string) *types.AttributeValueMemberS { return &types.AttributeValueMemberS{Value: v} }
