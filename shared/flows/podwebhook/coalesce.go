package podwebhook

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// BatchQueue is the batch call the intake makes when it has several pods to send at once; *sqs.Client
// satisfies it. A Queue without it sends each pod alone.
type BatchQueue interface {
	SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error)
}

var _ BatchQueue = (*sqs.Client)(nil)

const (
	// maxBatch is SQS's limit on the messages of one SendMessageBatch.
	maxBatch = 10
	// recentFor is how long the intake remembers a pod it enqueued: SQS FIFO's deduplication window,
	// inside which SQS would drop the message anyway.
	recentFor = 5 * time.Minute
	// maxRecent bounds that memory; past it, forgotten pods are only sent again (and deduplicated by SQS).
	maxRecent = 20000
	// maxInFlight bounds the SQS calls one process has in flight at once; the pods that arrive meanwhile
	// wait for the next free call.
	maxInFlight = 4
)

// coalescer coalesces the intake's enqueues. A pod this process enqueued within recentFor is not sent
// again. A pod whose enqueue finds fewer than maxInFlight sends in flight is sent at once; pods that
// arrive while they are all in flight wait and go together, up to maxBatch in one SendMessageBatch, with
// the next call that returns. In Lambda an execution environment serves one request at a time, so each
// pod is sent alone and nothing waits; where one process serves many requests at once, a burst of Events
// costs about a tenth of the SQS calls. The zero value is ready.
type coalescer struct {
	mu       sync.Mutex
	inFlight int
	waiting  []*queued
	recent   map[string]time.Time // pod uid → when it was enqueued
}

// queued is one pod's message and where its outcome goes.
type queued struct {
	uid, body, group string
	done             chan error // buffered: the sender never blocks on it
}

// seen reports whether the pod was enqueued within recentFor of now.
func (c *coalescer) seen(uid string, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	at, ok := c.recent[uid]
	return ok && now.Sub(at) < recentFor
}

// remember records that the pods were enqueued at now, dropping what is past recentFor when the memory
// is full (and all of it if that is not enough).
func (c *coalescer) remember(now time.Time, uids ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.recent == nil {
		c.recent = map[string]time.Time{}
	}
	if len(c.recent)+len(uids) > maxRecent {
		for uid, at := range c.recent {
			if now.Sub(at) >= recentFor {
				delete(c.recent, uid)
			}
		}
		if len(c.recent)+len(uids) > maxRecent {
			clear(c.recent)
		}
	}
	for _, uid := range uids {
		c.recent[uid] = now
	}
}

// send enqueues q: at once when a call is free, else with the next batch. It returns the send's error,
// or ctx's when ctx ends first (the pod may still be sent).
func (in *Intake) send(ctx context.Context, q *queued) error {
	c := &in.coalesce
	c.mu.Lock()
	if c.inFlight >= maxInFlight {
		c.waiting = append(c.waiting, q)
		c.mu.Unlock()
		select {
		case err := <-q.done:
			return err
		case <-ctx.Done():
			return fmt.Errorf("waiting to be sent with other pods: %w", ctx.Err())
		}
	}
	c.inFlight++
	c.mu.Unlock()
	in.sendBatch(ctx, []*queued{q})
	in.sendWaiting(ctx)
	return <-q.done
}

// sendWaiting hands the call that just returned to what waits, a batch at a time, on its own goroutine
// (the request that made the call has its answer); with nothing waiting, the call is free again.
func (in *Intake) sendWaiting(ctx context.Context) {
	c := &in.coalesce
	c.mu.Lock()
	if len(c.waiting) == 0 {
		c.inFlight--
		c.mu.Unlock()
		return
	}
	n := min(len(c.waiting), maxBatch)
	batch := c.waiting[:n:n]
	c.waiting = c.waiting[n:]
	c.mu.Unlock()
	// The waiting requests have deadlines of their own; the batch gets a budget of its own, keeping the
	// context's values.
	go func() {
		bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), AnswerBudget)
		defer cancel()
		in.sendBatch(bctx, batch)
		in.sendWaiting(ctx)
	}()
}

// sendBatch makes one SQS call for the pods (SendMessage for one, SendMessageBatch for more when the
// queue has it) and gives each its outcome.
func (in *Intake) sendBatch(ctx context.Context, batch []*queued) {
	bq, batches := in.Queue.(BatchQueue)
	if len(batch) == 1 || !batches {
		for _, q := range batch {
			_, err := in.Queue.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(in.QueueURL), MessageBody: aws.String(q.body),
				MessageGroupId: aws.String(q.group), MessageDeduplicationId: aws.String(q.uid)})
			in.settle(q, err)
		}
		return
	}
	entries := make([]sqstypes.SendMessageBatchRequestEntry, len(batch))
	for i, q := range batch {
		entries[i] = sqstypes.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), MessageBody: aws.String(q.body),
			MessageGroupId: aws.String(q.group), MessageDeduplicationId: aws.String(q.uid)}
	}
	out, err := bq.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(in.QueueURL), Entries: entries})
	if err != nil {
		for _, q := range batch {
			in.settle(q, err)
		}
		return
	}
	failed := map[string]error{}
	for _, f := range out.Failed {
		failed[aws.ToString(f.Id)] = fmt.Errorf("SQS refused the message: %s %s", aws.ToString(f.Code), aws.ToString(f.Message))
	}
	for i, q := range batch {
		in.settle(q, failed[strconv.Itoa(i)])
	}
}

// settle gives q its outcome and remembers it when it was sent.
func (in *Intake) settle(q *queued, err error) {
	if err == nil {
		in.coalesce.remember(time.Now(), q.uid)
	}
	q.done <- err
}
