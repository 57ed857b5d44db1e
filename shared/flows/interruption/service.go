package interruption

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/mirror"
	"github.com/nodewright/nodewright/shared/adapters/sqsbatch"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// DedupeScope is the state-table scope interruption event ids are deduplicated in.
const DedupeScope = "interruption"

// Defaults of ServiceConfig.
const (
	// DefaultProcessingWindow is how long a message stays claimed by the invocation processing it when
	// the context has no deadline; with one, the claim lasts until the deadline.
	DefaultProcessingWindow = time.Minute
	// DefaultDedupeWindow is how long a handled event id is remembered; EventBridge and SQS redeliver
	// within minutes, the interruption queue keeps messages for five.
	DefaultDedupeWindow = 24 * time.Hour
	// minProcessingWindow keeps the claim on a message meaningful when the deadline is very near.
	minProcessingWindow = 10 * time.Second
)

// StateStore is the part of the state table the service uses; *state.Store satisfies it.
type StateStore interface {
	BeginEvent(ctx context.Context, scope, id, owner string, processing time.Duration) (state.Outcome, error)
	ReleaseEvent(ctx context.Context, scope, id, owner string) error
	CompleteEvent(ctx context.Context, scope, id string, window time.Duration) error
	ClaimByInstance(ctx context.Context, instanceID string) (state.Claim, error)
	GetClaim(ctx context.Context, name string) (state.Claim, error)
	UpdateClaim(ctx context.Context, name string, mutate func(*state.Claim) error) (state.Claim, error)
	MarkUnavailable(ctx context.Context, o state.Offering, reason string, ttl time.Duration) error
	RecordLaunchFailure(ctx context.Context, nodeClass string, f state.LaunchFailure) (bool, error)
	RecordDecision(ctx context.Context, d state.Decision) error
	Decisions(ctx context.Context, subject string, limit int) ([]state.Decision, error)
}

// NodeActions changes Nodes; *kube.Actions satisfies it. Taint is idempotent. The interruption path
// never deletes a Node or a pod: the termination flow does, once the instance is gone.
type NodeActions interface {
	Taint(ctx context.Context, node string, taint corev1.Taint) error
}

// EventRecorder publishes Kubernetes Events; *kube.Recorder satisfies it. Events are best effort.
type EventRecorder interface {
	Publish(ctx context.Context, e kube.Event) (bool, error)
}

// MessageSender sends one SQS message; *sqs.Client satisfies it.
type MessageSender interface {
	SendMessage(ctx context.Context, in *sqs.SendMessageInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
}

var (
	_ StateStore    = (*state.Store)(nil)
	_ NodeActions   = (*kube.Actions)(nil)
	_ EventRecorder = (*kube.Recorder)(nil)
	_ MessageSender = (*sqs.Client)(nil)
)

// ServiceConfig is the service's fixed settings.
type ServiceConfig struct {
	// ClusterName names the cluster in the provisioning FIFO queue's message groups
	// (provisioningqueue.UrgentGroup).
	ClusterName string
	// ProvisioningQueueURL is the FIFO queue that wakes the provisioner; TerminationQueueURL the standard
	// queue of functions/termination.
	ProvisioningQueueURL, TerminationQueueURL string
	// Rebalance says what a rebalance recommendation does (default RebalanceEventOnly).
	Rebalance RebalancePolicy
	// ProcessingWindow overrides how long a message stays claimed (default: until the context's
	// deadline, else DefaultProcessingWindow). A redelivery after it may process the event again.
	ProcessingWindow time.Duration
	// DedupeWindow is how long a handled event id is remembered (default DefaultDedupeWindow).
	DedupeWindow time.Duration
	// Retry is how a message that fails for a transient reason is tried again inside the invocation, how
	// close to the deadline the batch stops, and how soon SQS redelivers what still failed.
	Retry sqsbatch.Policy
}

// ServiceDeps are the adapters the service acts through.
type ServiceDeps struct {
	State StateStore
	// Instances confirms with EC2 whose an instance is when the state table's instance index does not
	// name it (nil: a miss is taken as "not ours").
	Instances InstanceOwners
	// Reasons tells why an instance went (EC2's state reason), so that only an instance EC2 terminated
	// while launching it counts as a failed launch (nil: every booting instance that went does).
	Reasons GoneReasons
	Nodes   NodeActions
	Events  EventRecorder
	Queue   MessageSender
	// Visibility requeues failed messages on the interruption queue in seconds (nil: they come back after
	// the queue's visibility timeout).
	Visibility sqsbatch.VisibilityChanger
	// Log receives one line per message outcome (default: discarded).
	Log *slog.Logger
	// Mirrors writes the NodeClaim mirrors of the claims a message changed, after its steps (mirrors.go);
	// nil writes none (the lifecycle's sweep does).
	Mirrors ClaimMirrors
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Service handles batches from the interruption queue: for every message it deduplicates the event,
// finds the claims of its instances, decides (Decide) and carries out the steps — replacement first,
// then the drain — so that a repeated or redelivered message never acts twice.
type Service struct {
	cfg  ServiceConfig
	deps ServiceDeps
}

// NewService returns a service. Zero values in cfg and a nil Log or Now take their defaults.
func NewService(cfg ServiceConfig, deps ServiceDeps) *Service {
	if cfg.Rebalance == "" {
		cfg.Rebalance = RebalanceEventOnly
	}
	if cfg.DedupeWindow <= 0 {
		cfg.DedupeWindow = DefaultDedupeWindow
	}
	if deps.Log == nil {
		deps.Log = slog.New(slog.NewJSONHandler(io.Discard, nil))
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	if deps.Mirrors != nil && deps.State != nil {
		deps.State = noting{deps.State}
	}
	return &Service{cfg: cfg, deps: deps}
}

// HandleBatch handles every record of a Lambda SQS batch in order. A message that fails for a transient
// reason (state table, Kubernetes or SQS errors) is tried again inside the invocation while its deadline
// leaves room (cfg.Retry); one that still fails, one whose event another invocation is processing right
// now, and those the batch had no time left to start are reported as batch item failures and made
// visible again in seconds, so SQS redelivers them well inside a spot notice's two minutes; from its
// FreshCopyAfterReceives-th receive a failed message is sent again as a fresh copy and acknowledged, so
// an outage longer than a few receives does not send it to the dead-letter queue. Malformed,
// unknown-kind, no-op and unknown-instance messages are logged once and acknowledged.
func (s *Service) HandleBatch(ctx context.Context, ev events.SQSEvent) events.SQSEventResponse {
	resp, _ := s.Handle(ctx, ev)
	return resp
}

// Handle is HandleBatch that also says what the batch did, for metrics.
func (s *Service) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, BatchStats) {
	var resp events.SQSEventResponse
	var failed []events.SQSMessage
	stats := BatchStats{Received: map[string]int{}}
	now := s.deps.Now()
	for i, r := range ParseSQSEvent(ev) {
		stats.Received[messageType(r)]++
		if d, ok := queueDuration(ev.Records[i], now); ok {
			stats.QueueDurations = append(stats.QueueDurations, d)
		}
		if r.Err != nil {
			s.logParseError(ctx, r)
			stats.Acknowledged++
			continue
		}
		if !s.cfg.Retry.HasTime(ctx) {
			s.deps.Log.WarnContext(ctx, "no time left in the invocation to start the message; SQS redelivers it",
				"messageId", r.MessageID, "eventId", r.Message.EventID())
			failed = append(failed, ev.Records[i])
			stats.Failed++
			stats.Unstarted++
			continue
		}
		mctx, changed := mirror.CollectChanged(ctx)
		tries, err := s.cfg.Retry.Do(mctx, func(ctx context.Context) error {
			disrupted, err := s.handle(ctx, r.MessageID, r.Message)
			stats.Disrupted = append(stats.Disrupted, disrupted...) // never the same claim twice (see handle)
			return err
		}, func(err error) bool { return !errors.Is(err, ErrInProgress) })
		s.followMirrors(ctx, changed, &stats)
		stats.Retries += tries - 1
		if err != nil {
			failed = append(failed, ev.Records[i])
			stats.Failed++
			continue
		}
		stats.Acknowledged++
	}
	failed = s.copyFresh(ctx, failed, &stats)
	for _, m := range failed {
		resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
	}
	s.requeue(ctx, failed)
	return resp, stats
}

// requeue makes the failed messages visible again in seconds. A message it cannot requeue still comes
// back, after the queue's visibility timeout.
func (s *Service) requeue(ctx context.Context, failed []events.SQSMessage) {
	if len(failed) == 0 || s.deps.Visibility == nil {
		return
	}
	url, err := sqsbatch.QueueURL(failed[0])
	if err == nil {
		err = s.cfg.Retry.Requeue(ctx, s.deps.Visibility, url, failed)
	}
	if err != nil {
		s.deps.Log.WarnContext(ctx, "failed messages come back after the queue's visibility timeout", "error", err.Error())
	}
}

// processingWindow is how long this invocation claims a message.
func (s *Service) processingWindow(ctx context.Context) time.Duration {
	if s.cfg.ProcessingWindow > 0 {
		return s.cfg.ProcessingWindow
	}
	if deadline, ok := ctx.Deadline(); ok {
		return max(deadline.Sub(s.deps.Now()), minProcessingWindow)
	}
	return DefaultProcessingWindow
}
