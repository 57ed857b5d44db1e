package state

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

const markPartition = "MARK"

// ProvisionerSnapshotMark stands at the start of the snapshot of the provisioner's last complete run. The
// provisioner advances it; a queue trigger sent before it is coalesced, and a drain waits until it passes
// the drain's start (the draining Node's pods have been placed).
const ProvisionerSnapshotMark = "provisioner-snapshot"

// AdvanceMark moves the named high-water mark to at, unless it already stands at or after at: marks only
// go forward, so two writers that finish out of order leave the later time. The provisioner marks the
// start of each complete snapshot, and a trigger sent before that mark has nothing new to show it.
func (s *Store) AdvanceMark(ctx context.Context, name string, at time.Time) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       key(markPartition, name),
		UpdateExpression:          aws.String("SET #at = :at"),
		ConditionExpression:       aws.String("attribute_not_exists(#at) OR #at < :at"),
		ExpressionAttributeNames:  map[string]string{"#at": "at"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":at": num(at.UnixMilli())},
	})
	var failed *types.ConditionalCheckFailedException
	if errors.As(err, &failed) {
		return nil // already at or past at
	}
	if err != nil {
		return fmt.Errorf("advancing mark %s: %w", name, err)
	}
	return nil
}

// Mark reads the named high-water mark; the zero time when it was never set.
func (s *Store) Mark(ctx context.Context, name string) (time.Time, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: key(markPartition, name),
		ConsistentRead: aws.Bool(true)})
	if err != nil {
		return time.Time{}, fmt.Errorf("reading mark %s: %w", name, err)
	}
	if _, ok := out.Item["at"]; !ok {
		return time.Time{}, nil
	}
	ms, err := numberAttr(out.Item, "at")
	if err != nil {
		return time.Time{}, fmt.Errorf("mark %s: %w", name, err)
	}
	return time.UnixMilli(ms), nil
}
