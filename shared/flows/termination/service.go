package termination

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"k8s.io/client-go/kubernetes"

	"github.com/nodewright/nodewright/shared/adapters/crash"
	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/mirror"
	"github.com/nodewright/nodewright/shared/adapters/sqsbatch"
)

// Config tunes a Service; zero durations take the defaults.
type Config struct {
	// QueueURL is the termination queue the unfinished requests are sent back to (required).
	QueueURL string
	// ProvisioningQueueURL is the provisioner's FIFO queue and ClusterName the cluster its message groups
	// name (provisioningqueue.UrgentGroup): a drain that starts wakes the provisioner there to launch its pods' replacement. Empty: the drain waits for
	// the provisioner's schedule.
	ProvisioningQueueURL, ClusterName string
	// DisruptionQueueURL is the disruption function's wake queue: a claim whose node was removed sends
	// one DisruptionWake there. Empty: nothing is sent.
	DisruptionQueueURL string
	// ProgressDelay is how long to wait before looking again while pods are leaving (default 5 s).
	ProgressDelay time.Duration
	// BlockedDelay is the longest wait while the drain is blocked by budgets or do-not-disrupt pods
	// (default 30 s); the wait grows from ProgressDelay to it over the attempts.
	BlockedDelay time.Duration
	// VolumeDetachWait bounds the wait for the Node's VolumeAttachments once it is drained (default 1 min).
	VolumeDetachWait time.Duration
	// ReplacementWait and DeadlineReserve bound the wait for replacement capacity before evicting (see
	// gate; defaults DefaultReplacementWait and DefaultDeadlineReserve).
	ReplacementWait, DeadlineReserve time.Duration
	// Concurrency is how many messages of a batch are worked on at once (default 4).
	Concurrency int
	// MessageTimeout bounds the steps of one message (default DefaultMessageTimeout); they stop earlier,
	// Retry.Reserve before the invocation's deadline. A message cut short is re-driven at once.
	MessageTimeout time.Duration
	// Retry says how close to the invocation's deadline the batch stops starting messages (Reserve) and
	// how soon a failed message comes back (its visibility); its tries are not used: a failed step is
	// looked at again on redelivery, from the third receive as a fresh copy (FreshCopyAfterReceives).
	Retry sqsbatch.Policy
	// Log receives one line per message that failed or was dropped (default slog.Default()).
	Log *slog.Logger
}

// Deps are the adapters a Service works through. Kube, Store, Instances, Queue and Now are required.
type Deps struct {
	Store Store
	// Kube reads Nodes, pods and VolumeAttachments.
	Kube kubernetes.Interface
	// Actions changes them; nil means kube.NewActions(Kube).
	Actions   Actions
	Instances Instances
	// Events may be nil: then no Events are published.
	Events Events
	Queue  Queue
	// Visibility makes failed messages visible again in seconds (nil: after the queue's visibility timeout).
	Visibility sqsbatch.VisibilityChanger
	// Mirrors writes the NodeClaim mirrors of the claims a request changed, after its steps (mirrors.go);
	// nil writes none (the lifecycle's sweep does).
	Mirrors ClaimMirrors
	Now     func() time.Time
}

// Service drains and removes the nodes named by termination requests.
type Service struct {
	cfg  Config
	deps Deps
	log  *slog.Logger
}

// NewService returns a Service; it fills in Config's defaults.
func NewService(cfg Config, deps Deps) *Service {
	if cfg.ProgressDelay <= 0 {
		cfg.ProgressDelay = 5 * time.Second
	}
	if cfg.BlockedDelay <= 0 {
		cfg.BlockedDelay = 30 * time.Second
	}
	if cfg.ReplacementWait <= 0 {
		cfg.ReplacementWait = DefaultReplacementWait
	}
	if cfg.DeadlineReserve <= 0 {
		cfg.DeadlineReserve = DefaultDeadlineReserve
	}
	if cfg.VolumeDetachWait <= 0 {
		cfg.VolumeDetachWait = time.Minute
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 4
	}
	if cfg.MessageTimeout <= 0 {
		cfg.MessageTimeout = DefaultMessageTimeout
	}
	if cfg.Retry.Reserve <= 0 {
		cfg.Retry.Reserve = sqsbatch.DefaultReserve
	}
	if deps.Actions == nil && deps.Kube != nil {
		deps.Actions = kube.NewActions(deps.Kube)
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	if deps.Mirrors != nil && deps.Store != nil {
		deps.Store = noting{deps.Store}
	}
	log := cfg.Log
	if log == nil {
		log = slog.Default()
	}
	return &Service{cfg: cfg, deps: deps, log: log}
}

// HandleBatch works on every message of a termination-queue batch. A malformed message is logged once and
// acknowledged; a request that is not finished is sent again with a delay and acknowledged; only a
// transient failure (state, Kubernetes, EC2 or SQS) is reported as a batch item failure, so SQS delivers
// that message again (a message whose steps ran out of their own time — MessageTimeout, or the
// invocation's deadline less Retry.Reserve — is sent again at once instead, before the invocation ends) — until it has been received FreshCopyAfterReceives times: then a fresh copy is sent
// and the message acknowledged, so a request never reaches the dead-letter queue while SQS takes sends.
func (s *Service) HandleBatch(ctx context.Context, ev events.SQSEvent) events.SQSEventResponse {
	resp, _ := s.Handle(ctx, ev)
	return resp
}

// Handle is HandleBatch that also says what the batch did, for metrics.
func (s *Service) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, BatchStats) {
	results := make([]handled, len(ev.Records))
	sem := make(chan struct{}, s.cfg.Concurrency)
	var wg sync.WaitGroup
	for i, rec := range ev.Records {
		sem <- struct{}{}
		if !s.cfg.Retry.HasTime(ctx) {
			<-sem
			s.log.WarnContext(ctx, "no time left in the invocation to start the termination request; SQS redelivers it",
				"messageId", rec.MessageId)
			results[i] = handled{reason: "unstarted"}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			mctx, changed := mirror.CollectChanged(ctx)
			results[i] = s.handleMessage(mctx, rec)
			results[i].mirrorsWritten, results[i].mirrorsLeft = s.followMirrors(ctx, changed)
		}()
	}
	wg.Wait()
	var resp events.SQSEventResponse
	var failed []events.SQSMessage
	stats := newBatchStats()
	for i, r := range results {
		stats.count(r.out.nodePool, r.reason, r.out.stats)
		if r.redriven {
			stats.Redriven++
		}
		stats.MirrorsWritten += r.mirrorsWritten
		stats.MirrorsLeft += r.mirrorsLeft
		if !r.ack {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: ev.Records[i].MessageId})
			failed = append(failed, ev.Records[i])
		}
	}
	if s.deps.Visibility != nil && len(failed) > 0 {
		if err := s.cfg.Retry.Requeue(ctx, s.deps.Visibility, s.cfg.QueueURL, failed); err != nil {
			s.log.WarnContext(ctx, "failed termination requests come back after the queue's visibility timeout", "error", err.Error())
		}
	}
	return resp, stats
}

// handled is what became of one message.
type handled struct {
	// ack: the message may be deleted; redriven: it was sent again to look later.
	ack, redriven bool
	reason        string
	out           outcome
	// mirrorsWritten and mirrorsLeft count the NodeClaim mirrors followed after the request's steps.
	mirrorsWritten, mirrorsLeft int
}

// processGuarded is process on a message's goroutine: a panic in a step is that message's failure,
// retried as any failed step, instead of the end of the invocation and of every other drain in the batch.
func (s *Service) processGuarded(ctx context.Context, in delivery) (out outcome, err error) {
	defer crash.Capture(&err)
	return s.process(ctx, in)
}

// handleMessage works on one message and says whether it may be acknowledged.
func (s *Service) handleMessage(ctx context.Context, rec events.SQSMessage) handled {
	req, err := ParseRequest(rec.Body)
	if err != nil {
		s.log.WarnContext(ctx, "malformed termination request dropped", "messageId", rec.MessageId, "reason", err.Error())
		return handled{ack: true}
	}
	in := delivery{req: req, drainedAt: drainedAtOf(rec)}
	stepCtx, cancel := s.messageContext(ctx)
	out, err := s.processGuarded(stepCtx, in)
	cut := err != nil && cutShort(ctx, stepCtx)
	cancel()
	h := handled{reason: req.Reason, out: out}
	if cut {
		// The steps ran out of the message's time, not of retries: a copy now (same attempt, as the step
		// did not finish) lets the next invocation go on within seconds.
		if sendErr := freshCopy.Send(ctx, s.deps.Queue, s.cfg.QueueURL, rec, 0); sendErr != nil {
			s.log.ErrorContext(ctx, "termination step ran out of time and sending the request again failed; the message is delivered again",
				"messageId", rec.MessageId, "claim", req.Claim, "attempt", req.Attempt, "error", err.Error(), "sendError", sendErr.Error())
			return h
		}
		s.log.WarnContext(ctx, "termination step ran out of time; the request is sent again", "messageId", rec.MessageId,
			"claim", req.Claim, "attempt", req.Attempt, "error", err.Error())
		h.ack, h.redriven = true, true
		return h
	}
	if err != nil {
		sent, sendErr := s.retryFresh(ctx, rec)
		switch {
		case sendErr != nil:
			s.log.ErrorContext(ctx, "termination step failed and sending a fresh copy failed too; the message is delivered again",
				"messageId", rec.MessageId, "claim", req.Claim, "attempt", req.Attempt, "error", err.Error(), "sendError", sendErr.Error())
		case sent:
			s.log.ErrorContext(ctx, "termination step failed again; a fresh copy of the request is sent", "messageId", rec.MessageId,
				"claim", req.Claim, "attempt", req.Attempt, "error", err.Error())
			h.ack, h.redriven = true, true
		default:
			s.log.ErrorContext(ctx, "termination step failed; the message is delivered again", "messageId", rec.MessageId,
				"claim", req.Claim, "attempt", req.Attempt, "error", err.Error())
		}
		return h
	}
	if out.finished {
		if out.note != "" {
			s.log.InfoContext(ctx, out.note, "messageId", rec.MessageId, "claim", req.Claim, "attempt", req.Attempt)
		}
		h.ack = true
		return h
	}
	if err := s.redrive(ctx, in, out); err != nil {
		s.log.ErrorContext(ctx, "sending the termination request again failed", "messageId", rec.MessageId,
			"claim", req.Claim, "attempt", req.Attempt, "error", err.Error())
		return h
	}
	h.ack, h.redriven = true, true
	return h
}
