package state

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// batchWriteLimit is how many items one BatchWriteItem call takes.
const batchWriteLimit = 25

// unprocessedRetries bounds how often a batch's unprocessed items (throttling) are sent again.
const unprocessedRetries = 5

// RecordDecisions stores many decisions with BatchWriteItem, 25 to a call, so thousands of pods that
// cannot be provisioned are recorded in seconds rather than one round trip each. Items DynamoDB leaves
// unprocessed are sent again with a growing pause; what is still left after that is an error naming how
// many were lost. A decision that is invalid fails the whole call before anything is written.
func (s *Store) RecordDecisions(ctx context.Context, ds []Decision) error {
	requests := make([]types.WriteRequest, 0, len(ds))
	for _, d := range ds {
		item, err := s.decisionItem(d)
		if err != nil {
			return fmt.Errorf("decision %s for %s: %w", d.ID, d.Subject, err)
		}
		requests = append(requests, types.WriteRequest{PutRequest: &types.PutRequest{Item: item}})
	}
	for start := 0; start < len(requests); start += batchWriteLimit {
		if err := s.writeBatch(ctx, requests[start:min(start+batchWriteLimit, len(requests))]); err != nil {
			return fmt.Errorf("recording decisions %d–%d of %d: %w", start+1, min(start+batchWriteLimit, len(requests)), len(requests), err)
		}
	}
	return nil
}

// writeBatch writes up to 25 requests, sending unprocessed ones again.
func (s *Store) writeBatch(ctx context.Context, batch []types.WriteRequest) error {
	pause := 50 * time.Millisecond
	for attempt := 0; ; attempt++ {
		out, err := s.db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{
			RequestItems: map[string][]types.WriteRequest{s.table: batch}})
		if err != nil {
			return err
		}
		batch = out.UnprocessedItems[s.table]
		if len(batch) == 0 {
			return nil
		}
		if attempt == unprocessedRetries {
			return fmt.Errorf("%d items left unprocessed after %d retries", len(batch), unprocessedRetries)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
		pause *= 2
	}
}
