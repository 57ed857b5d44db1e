package interruption

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/kube"
	"github.com/nodewright/nodewright/shared/state"
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
	BeginEvent(ctx context.Context, scope, id string, processing time.Duration) (state.Outcome, error)
	CompleteEvent(ctx context.Context, scope, id string, window time.Duration) error
	ClaimByInstance(ctx context.Context, instanceID string) (state.Claim, error)
	UpdateClaim(ctx context.Context, name string, mutate func(*state.Claim) error) (state.Claim, error)
	MarkUnavailable(ctx context.Context, o state.Offering, reason string, ttl time.Duration) error
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
	// ClusterName is the provisioning FIFO queue's message group.
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
}

// ServiceDeps are the adapters the service acts through.
type ServiceDeps struct {
	State  StateStore
	Nodes  NodeActions
	Events EventRecorder
	Queue  MessageSender
	// Log receives one line per message outcome (default: discarded).
	Log *slog.Logger
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
	return &Service{cfg: cfg, deps: deps}
}

// HandleBatch handles every record of a Lambda SQS batch in order and reports as batch item failures
// only the messages that failed for a transient reason (state table, Kubernetes or SQS errors, or the
// same event being processed by another invocation right now): SQS redelivers those. Malformed,
// unknown-kind, no-op and unknown-instance messages are logged once and acknowledged.
func (s *Service) HandleBatch(ctx context.Context, ev events.SQSEvent) events.SQSEventResponse {
	resp, _ := s.Handle(ctx, ev)
	return resp
}

// Handle is HandleBatch that also says what the batch did, for metrics.
func (s *Service) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, BatchStats) {
	var resp events.SQSEventResponse
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
		disrupted, err := s.handle(ctx, r.MessageID, r.Message)
		stats.Disrupted = append(stats.Disrupted, disrupted...)
		if err != nil {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: r.MessageID})
			stats.Failed++
			continue
		}
		stats.Acknowledged++
	}
	return resp, stats
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
