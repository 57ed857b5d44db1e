package state

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// batchWriteLimit is how many items one BatchWriteItem call takes.
const batchWriteLimit = 25

// unprocessedRetries bounds how often a batch's unprocessed items (throttling) are sent again.
const unprocessedRetries = 5

// decisionWriters is how many BatchWriteItem calls RecordDecisions has in flight at once: enough that a
// run's few hundred records take a handful of round trips, few enough that one run does not crowd the
// table's other writers (claims) off a shared partition's throughput.
const decisionWriters = 4

// RecordDecisions stores many decisions with BatchWriteItem, 25 to a call and decisionWriters calls at
// once, so hundreds of records take a few round trips. Items DynamoDB leaves unprocessed are sent again
// with a growing pause. ctx's deadline is the time budget: a batch not started by then is not sent, and
// the error says how many decisions were not recorded. A decision that is invalid fails the whole call
// before anything is written.
func (s *Store) RecordDecisions(ctx context.Context, ds []Decision) error {
	requests := make([]types.WriteRequest, 0, len(ds))
	for _, d := range ds {
		item, err := s.decisionItem(d)
		if err != nil {
			return fmt.Errorf("decision %s for %s: %w", d.ID, d.Subject, err)
		}
		requests = append(requests, types.WriteRequest{PutRequest: &types.PutRequest{Item: item}})
	}
	var batches [][]types.WriteRequest
	for start := 0; start < len(requests); start += batchWriteLimit {
		batches = append(batches, requests[start:min(start+batchWriteLimit, len(requests))])
	}
	next := make(chan []types.WriteRequest)
	var (
		mu       sync.Mutex
		lost     int
		firstErr error
		wg       sync.WaitGroup
	)
	for w := 0; w < min(decisionWriters, len(batches)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for batch := range next {
				err := ctx.Err()
				if err == nil {
					err = s.writeBatch(ctx, batch)
				}
				if err != nil {
					mu.Lock()
					lost += len(batch)
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for _, b := range batches {
		next <- b
	}
	close(next)
	wg.Wait()
	if lost > 0 {
		return fmt.Errorf("%d of %d decisions not recorded: %w", lost, len(requests), firstErr)
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
