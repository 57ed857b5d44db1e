package state

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

const budgetPartition = "BUDGET"

// ReserveDisruption counts claim against its node pool's disruption budget before the claim is disrupted.
// The counter and a per-claim reservation are written in one transaction, conditioned on the counter being
// below allowed, so overlapping ticks can never take more than the budget. Reserving a claim that is
// already reserved succeeds without counting it twice. ErrBudgetExhausted when no slot is left.
func (s *Store) ReserveDisruption(ctx context.Context, nodePool, claim string, allowed int) error {
	if allowed <= 0 {
		return fmt.Errorf("reserving disruption of %s in %s: budget allows 0: %w", claim, nodePool, ErrBudgetExhausted)
	}
	var err error
	for attempt := 0; attempt < transactionAttempts; attempt++ {
		if err = s.reserve(ctx, nodePool, claim, allowed); !transactionConflict(err) {
			return err
		}
	}
	return err
}

// transactionAttempts bounds the retries of a transaction that collided with another one on the same
// items (DynamoDB cancels one of them with TransactionConflict; the loser simply tries again).
const transactionAttempts = 5

func (s *Store) reserve(ctx context.Context, nodePool, claim string, allowed int) error {
	_, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{
			TableName:                aws.String(s.table),
			Item:                     withKey(budgetPartition+"#"+nodePool, claim, map[string]types.AttributeValue{"at": num(s.now().UnixMilli())}),
			ConditionExpression:      aws.String("attribute_not_exists(#pk)"),
			ExpressionAttributeNames: map[string]string{"#pk": PartitionKey},
		}},
		{Update: &types.Update{
			TableName:                 aws.String(s.table),
			Key:                       key(budgetPartition, nodePool),
			UpdateExpression:          aws.String("SET inFlight = if_not_exists(inFlight, :zero) + :one"),
			ConditionExpression:       aws.String("attribute_not_exists(inFlight) OR inFlight < :allowed"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":zero": num(0), ":one": num(1), ":allowed": num(int64(allowed))},
		}},
	}})
	if err == nil {
		return nil
	}
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) && len(tce.CancellationReasons) == 2 {
		if failed(tce.CancellationReasons[0]) {
			return nil // already reserved: the reservation is idempotent
		}
		if failed(tce.CancellationReasons[1]) {
			return fmt.Errorf("reserving disruption of %s in %s (allowed %d): %w", claim, nodePool, allowed, ErrBudgetExhausted)
		}
	}
	return fmt.Errorf("reserving disruption of %s in %s: %w", claim, nodePool, err)
}

// ReleaseDisruption gives claim's slot back (its disruption finished or was called off). Releasing a claim
// that holds no reservation does nothing.
func (s *Store) ReleaseDisruption(ctx context.Context, nodePool, claim string) error {
	var err error
	for attempt := 0; attempt < transactionAttempts; attempt++ {
		if err = s.release(ctx, nodePool, claim); !transactionConflict(err) {
			return err
		}
	}
	return err
}

func (s *Store) release(ctx context.Context, nodePool, claim string) error {
	_, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Delete: &types.Delete{
			TableName:                aws.String(s.table),
			Key:                      key(budgetPartition+"#"+nodePool, claim),
			ConditionExpression:      aws.String("attribute_exists(#pk)"),
			ExpressionAttributeNames: map[string]string{"#pk": PartitionKey},
		}},
		{Update: &types.Update{
			TableName:                 aws.String(s.table),
			Key:                       key(budgetPartition, nodePool),
			UpdateExpression:          aws.String("SET inFlight = inFlight - :one"),
			ConditionExpression:       aws.String("inFlight > :zero"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":zero": num(0), ":one": num(1)},
		}},
	}})
	if err == nil {
		return nil
	}
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) && len(tce.CancellationReasons) == 2 && failed(tce.CancellationReasons[0]) {
		return nil // nothing reserved
	}
	return fmt.Errorf("releasing disruption of %s in %s: %w", claim, nodePool, err)
}

// DisruptionsInFlight returns how many of the node pool's claims hold a disruption reservation.
func (s *Store) DisruptionsInFlight(ctx context.Context, nodePool string) (int, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: key(budgetPartition, nodePool), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return 0, fmt.Errorf("reading disruption budget of %s: %w", nodePool, err)
	}
	if out.Item == nil {
		return 0, nil
	}
	n, err := numberAttr(out.Item, "inFlight")
	return int(n), err
}

// transactionConflict reports whether a transaction was cancelled only because another one was writing
// the same items at the same moment.
func transactionConflict(err error) bool {
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		return false
	}
	for _, r := range tce.CancellationReasons {
		if r.Code != nil && *r.Code == "TransactionConflict" {
			return true
		}
	}
	return false
}

func failed(r types.CancellationReason) bool {
	return r.Code != nil && *r.Code == "ConditionalCheckFailed"
}

func withKey(pk, sk string, item map[string]types.AttributeValue) map[string]types.AttributeValue {
	for k, v := range key(pk, sk) {
		item[k] = v
	}
	return item
}
