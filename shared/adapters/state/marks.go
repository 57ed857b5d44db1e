package state

import (
	"context"
	"errors"
	"fmt"
	"strconv"
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

// ProvisionerPodsRevision is the API server revision the pods of the provisioner's last complete snapshot
// were listed at. A pod whose current resourceVersion is at or below it was in that snapshot as it is now.
const ProvisionerPodsRevision = "provisioner-pods-revision"

// AdvanceRevision moves the named revision mark to rv unless it already stands at or after it, like
// AdvanceMark.
func (s *Store) AdvanceRevision(ctx context.Context, name string, rv uint64) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       key(markPartition, name),
		UpdateExpression:          aws.String("SET #rv = :rv"),
		ConditionExpression:       aws.String("attribute_not_exists(#rv) OR #rv < :rv"),
		ExpressionAttributeNames:  map[string]string{"#rv": "rv"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":rv": &types.AttributeValueMemberN{Value: strconv.FormatUint(rv, 10)}},
	})
	var failed *types.ConditionalCheckFailedException
	if errors.As(err, &failed) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("advancing revision %s: %w", name, err)
	}
	return nil
}

// Revision reads the named revision mark; 0 when it was never set.
func (s *Store) Revision(ctx context.Context, name string) (uint64, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: key(markPartition, name),
		ConsistentRead: aws.Bool(true)})
	if err != nil {
		return 0, fmt.Errorf("reading revision %s: %w", name, err)
	}
	n, ok := out.Item["rv"].(*types.AttributeValueMemberN)
	if !ok {
		return 0, nil
	}
	rv, err := strconv.ParseUint(n.Value, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("revision %s: %q is not a revision: %w", name, n.Value, err)
	}
	return rv, nil
}
