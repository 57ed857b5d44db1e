package state

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// putMark writes one unavailability mark (an offering's, a subnet's) under its partition and key; what
// names it in the error.
func (s *Store) putMark(ctx context.Context, partition, key string, mark any, what string) error {
	item, err := marshalItem(partition, key, mark)
	if err != nil {
		return err
	}
	if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: item}); err != nil {
		return fmt.Errorf("marking %s unavailable: %w", what, err)
	}
	return nil
}

// liveMarks reads a partition of marks and keeps those whose window (untilMS, in Unix milliseconds) has
// not passed: DynamoDB's TTL deletes expired items only eventually.
func liveMarks[T any](ctx context.Context, s *Store, partition string, untilMS func(*T) int64, what string) ([]T, error) {
	all, err := queryAll[T](ctx, s.db, s.partition(partition, ""))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", what, err)
	}
	now := s.now().UnixMilli()
	live := all[:0]
	for i := range all {
		if untilMS(&all[i]) > now {
			live = append(live, all[i])
		}
	}
	return live, nil
}
