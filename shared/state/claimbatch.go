package state

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// MaxClaimsPerWrite is the most claims CreateClaims and PutClaims write at once: DynamoDB takes at most
// 100 actions in one TransactWriteItems.
const MaxClaimsPerWrite = 100

// maxTransactionBytes is DynamoDB's limit on the size of one TransactWriteItems.
const maxTransactionBytes = 4 << 20

// ClaimsError is a CreateClaims or PutClaims whose condition failed on some claims: names already taken
// (it wraps ErrAlreadyExists) or versions someone else moved (ErrConflict). Nothing was written.
type ClaimsError struct {
	// Names are the claims whose condition failed, in the order they were passed.
	Names []string
	op    string
	err   error
}

func (e *ClaimsError) Error() string {
	return fmt.Sprintf("%s claims %s: %v", e.op, strings.Join(e.Names, ", "), e.err)
}

func (e *ClaimsError) Unwrap() error { return e.err }

// CreateClaims writes new claim records (as CreateClaim does each) in one transaction: all of them or,
// when any name is taken, none (a *ClaimsError naming the taken ones). A batched launch records its
// claims with it, in one round trip instead of one per claim.
func (s *Store) CreateClaims(ctx context.Context, cs []Claim) ([]Claim, error) {
	out := make([]Claim, len(cs))
	items := make([]types.TransactWriteItem, len(cs))
	for i, c := range cs {
		c, item, err := s.newClaimItem(c)
		if err != nil {
			return nil, err
		}
		out[i] = c
		items[i] = types.TransactWriteItem{Put: &types.Put{
			TableName: aws.String(s.table), Item: item,
			ConditionExpression:      aws.String("attribute_not_exists(#pk)"),
			ExpressionAttributeNames: map[string]string{"#pk": PartitionKey},
		}}
	}
	if err := s.writeClaims(ctx, "creating", out, items, ErrAlreadyExists); err != nil {
		return nil, err
	}
	return out, nil
}

// PutClaims writes the updates olds[i] → news[i] (as PutClaim does each) in one transaction: all of them
// or, when any stored version is no longer olds[i].Version, none (a *ClaimsError naming those claims).
func (s *Store) PutClaims(ctx context.Context, olds, news []Claim) ([]Claim, error) {
	if len(olds) != len(news) {
		return nil, fmt.Errorf("updating claims: %d old records for %d new ones: %w", len(olds), len(news), ErrInvalid)
	}
	out := make([]Claim, len(news))
	items := make([]types.TransactWriteItem, len(news))
	for i := range news {
		c, item, err := s.nextClaimItem(olds[i], news[i])
		if err != nil {
			return nil, err
		}
		out[i] = c
		items[i] = types.TransactWriteItem{Put: &types.Put{
			TableName: aws.String(s.table), Item: item,
			ConditionExpression:       aws.String("#v = :v"),
			ExpressionAttributeNames:  map[string]string{"#v": "version"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":v": num(olds[i].Version)},
		}}
	}
	if err := s.writeClaims(ctx, "updating", out, items, ErrConflict); err != nil {
		return nil, err
	}
	return out, nil
}

// writeClaims runs the transaction that writes cs (items[i] writes cs[i]), trying again while it only
// collides with other transactions. When every condition failed on items that already hold these very
// writes, the SDK retried a transaction whose answer was lost, and it succeeded.
func (s *Store) writeClaims(ctx context.Context, op string, cs []Claim, items []types.TransactWriteItem, domain error) error {
	if len(items) == 0 {
		return nil
	}
	if len(items) > MaxClaimsPerWrite {
		return fmt.Errorf("%s %d claims at once: at most %d: %w", op, len(items), MaxClaimsPerWrite, ErrInvalid)
	}
	size := 0
	for _, it := range items {
		size += itemSize(it.Put.Item)
	}
	if size > maxTransactionBytes {
		return fmt.Errorf("%s %d claims at once: %d bytes, over %d: %w", op, len(items), size, maxTransactionBytes, ErrInvalid)
	}
	var err error
	for attempt := 0; attempt < transactionAttempts; attempt++ {
		_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
		if !transactionConflict(err) {
			break
		}
	}
	if err == nil {
		return nil
	}
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		return fmt.Errorf("%s %d claims: %w", op, len(cs), err)
	}
	var names []string
	for i, r := range tce.CancellationReasons {
		if failed(r) && i < len(cs) {
			names = append(names, cs[i].Name)
		}
	}
	if len(names) == 0 {
		return fmt.Errorf("%s %d claims: %w", op, len(cs), err)
	}
	if len(names) == len(cs) && s.holdWrites(ctx, cs) {
		return nil
	}
	return &ClaimsError{Names: names, op: op, err: domain}
}

// holdWrites reports whether every claim's item holds the claim's write id.
func (s *Store) holdWrites(ctx context.Context, cs []Claim) bool {
	for _, c := range cs {
		if !s.holdsWrite(ctx, claimPartition, c.Name, c.WriteID) {
			return false
		}
	}
	return true
}
