package state

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Outcome of claiming an event for processing.
type Outcome int

const (
	// Process: this caller owns the event now and must call CompleteEvent when done.
	Process Outcome = iota
	// InProgress: another invocation is processing it; try again after its processing window.
	InProgress
	// Done: the event was already handled within its dedupe window; acknowledge it and do nothing.
	Done
)

func (o Outcome) String() string {
	return [...]string{"process", "in-progress", "done"}[o]
}

const (
	eventProcessing = "processing"
	eventDone       = "done"
)

// BeginEvent claims event id in scope for processing on behalf of owner (unique per attempt). The claim
// lasts processing (the handler's deadline); if the handler dies before CompleteEvent, the event can be
// claimed again after that, so a crash never loses an event. Duplicates arriving meanwhile get
// InProgress or Done. A handler that fails gives the claim back with ReleaseEvent, so a retry need not
// wait for the window.
func (s *Store) BeginEvent(ctx context.Context, scope, id, owner string, processing time.Duration) (Outcome, error) {
	now := s.now()
	pk := "DEDUPE#" + scope + "#" + id
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(s.table),
		Item: map[string]types.AttributeValue{
			PartitionKey: str(pk), SortKey: str("DEDUPE"),
			"status":     str(eventProcessing),
			"owner":      str(owner),
			"until":      num(now.Add(processing).UnixMilli()),
			TTLAttribute: num(now.Add(processing).Unix() + 1),
		},
		ConditionExpression:       aws.String("attribute_not_exists(#pk) OR #until <= :now"),
		ExpressionAttributeNames:  map[string]string{"#pk": PartitionKey, "#until": "until"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":now": num(now.UnixMilli())},
	})
	if err == nil {
		return Process, nil
	}
	if !conditionFailed(err) {
		return 0, fmt.Errorf("claiming event %s/%s: %w", scope, id, err)
	}
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: key(pk, "DEDUPE"), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return 0, fmt.Errorf("reading event %s/%s: %w", scope, id, err)
	}
	if st, ok := out.Item["status"].(*types.AttributeValueMemberS); ok && st.Value == eventDone {
		return Done, nil
	}
	return InProgress, nil
}

// ReleaseEvent gives back owner's claim on event id after a failure, so the event can be claimed again at
// once (by a retry in the same invocation, or a redelivery). A claim owner no longer holds (it expired
// and another took it, or the event is done) is left alone.
func (s *Store) ReleaseEvent(ctx context.Context, scope, id, owner string) error {
	now := s.now()
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       key("DEDUPE#"+scope+"#"+id, "DEDUPE"),
		UpdateExpression:          aws.String("SET #until = :now"),
		ConditionExpression:       aws.String("#status = :processing AND #owner = :owner"),
		ExpressionAttributeNames:  map[string]string{"#until": "until", "#status": "status", "#owner": "owner"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":now": num(now.UnixMilli()), ":processing": str(eventProcessing), ":owner": str(owner)},
	})
	if err != nil && !conditionFailed(err) {
		return fmt.Errorf("releasing event %s/%s: %w", scope, id, err)
	}
	return nil
}

// CompleteEvent marks event id done; duplicates within window are then acknowledged without action.
func (s *Store) CompleteEvent(ctx context.Context, scope, id string, window time.Duration) error {
	now := s.now()
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(s.table),
		Item: map[string]types.AttributeValue{
			PartitionKey: str("DEDUPE#" + scope + "#" + id), SortKey: str("DEDUPE"),
			"status":     str(eventDone),
			"until":      num(now.Add(window).UnixMilli()),
			TTLAttribute: num(now.Add(window).Unix() + 1),
		},
	})
	if err != nil {
		return fmt.Errorf("completing event %s/%s: %w", scope, id, err)
	}
	return nil
}
