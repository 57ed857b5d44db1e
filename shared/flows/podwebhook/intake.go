package podwebhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/provisioningqueue"
)

// Queue is the SQS call the intake makes; *sqs.Client satisfies it.
type Queue interface {
	SendMessage(ctx context.Context, in *sqs.SendMessageInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
}

var _ Queue = (*sqs.Client)(nil)

// MaxBodyBytes bounds a request body; larger requests are refused before they are read whole.
const MaxBodyBytes = kube.MaxAdmissionReviewBytes

// Tokens decides whether a request's path token is accepted; *webhooktoken.Source implements it from
// Secrets Manager. Valid never fails: a token that cannot be checked is not accepted. It bounds its own
// time (webhooktoken.DefaultFetchTimeout).
type Tokens interface {
	Valid(ctx context.Context, presented string) bool
}

// AnswerBudget bounds a request's handling, the SQS call and its retries included. The API server waits
// at most footprint.WebhookTimeoutSeconds (1 s) and, when that passes, fails open and logs the error with
// the webhook's full URL — path token included. So the answer must leave well before, with room for the
// network: the enqueue gets what the token check (cached, or up to 400 ms when the secret is read again)
// left of this budget.
const AnswerBudget = 850 * time.Millisecond

// FailedScheduling is the reason kube-scheduler gives the Event it writes when it cannot place a pod.
const FailedScheduling = "FailedScheduling"

// Intake handles webhook requests for one cluster.
type Intake struct {
	Cluster  string
	QueueURL string
	// Tokens accepts the secret path segment the webhook URL carries (…/<token>).
	Tokens Tokens
	Queue  Queue
	Log    *slog.Logger
	Now    func() time.Time

	coalesce coalescer
}

// PodRef is the provisioning queue's message: which pod kube-scheduler could not place, and when the
// webhook saw its Event. ResourceVersion is the pod's as the Event names it (it may be empty).
type PodRef struct {
	Cluster         string    `json:"cluster"`
	Namespace       string    `json:"namespace"`
	Name            string    `json:"name"`
	UID             string    `json:"uid"`
	ResourceVersion string    `json:"resourceVersion"`
	ObservedAt      time.Time `json:"observedAt"`
}

// Response is what the webhook answers, independent of the transport, and Result what became of the
// request, for the webhook's metrics (one of the Result constants).
type Response struct {
	Status int
	Body   []byte
	Result string
}

// What became of a webhook request (the result dimension of webhook_requests_total).
const (
	ResultEnqueued      = "enqueued"       // a pending pod's wake-up was sent
	ResultCoalesced     = "coalesced"      // a pending pod sent moments ago: nothing sent again
	ResultIgnored       = "ignored"        // an Event that is not a pod's FailedScheduling, or a dry run
	ResultEnqueueFailed = "enqueue_failed" // the wake-up could not be sent; the backstop finds the pod
	ResultUnauthorized  = "unauthorized"
	ResultTooLarge      = "too_large"
	ResultMalformed     = "malformed"
	ResultError         = "error"
)

// Handle answers one webhook request: 401 without the token, 413 for a body over MaxBodyBytes, 400 for a
// body that is not an Event AdmissionReview (the API server's failurePolicy Ignore lets the Event
// through), and otherwise 200 allowed — after enqueuing the pod when the Event says kube-scheduler could
// not place it.
func (in *Intake) Handle(ctx context.Context, path string, body []byte) Response {
	ctx, cancel := context.WithTimeout(ctx, AnswerBudget) // the wall clock, not Now (which tests fix)
	defer cancel()
	if !in.authorized(ctx, path) {
		// Never the path: it is, or is close to, a token.
		in.Log.WarnContext(ctx, "refused a webhook request without a valid path token")
		return text(http.StatusUnauthorized, "unauthorized", ResultUnauthorized)
	}
	if len(body) > MaxBodyBytes {
		return text(http.StatusRequestEntityTooLarge, "request body too large", ResultTooLarge)
	}
	review, err := kube.DecodeEventReview(bytes.NewReader(body), MaxBodyBytes)
	if err != nil {
		in.Log.WarnContext(ctx, "rejected admission review", "reason", err.Error())
		return text(http.StatusBadRequest, "malformed AdmissionReview", ResultMalformed) // never echo internals
	}
	result := ResultIgnored
	if pod, ok := PendingPod(review); ok && !review.DryRun { // sideEffects: NoneOnDryRun
		sent, err := in.enqueue(ctx, pod)
		switch {
		case err != nil:
			result = ResultEnqueueFailed
			in.Log.ErrorContext(ctx, "enqueue failed; the backstop will find the pod", "pod", pod.Namespace+"/"+pod.Name, "error", err.Error())
		case sent:
			result = ResultEnqueued
		default:
			result = ResultCoalesced
		}
	}
	out, err := kube.AllowedResponse(review.UID)
	if err != nil {
		return text(http.StatusInternalServerError, "encoding response", ResultError)
	}
	return Response{Status: http.StatusOK, Body: out, Result: result}
}

// authorized checks the last path segment; the Tokens compare in constant time.
func (in *Intake) authorized(ctx context.Context, path string) bool {
	return in.Tokens != nil && in.Tokens.Valid(ctx, path[strings.LastIndex(path, "/")+1:])
}

// PendingPod returns the pod an Event is about when the Event says kube-scheduler could not place it: a
// FailedScheduling Event regarding a pod. Whether the pod is still pending is the provisioner's to judge:
// it reads the cluster before it decides anything.
func PendingPod(review *kube.EventReview) (corev1.ObjectReference, bool) {
	r := review.Regarding
	if review.Reason != FailedScheduling || r.Kind != "Pod" || r.Name == "" || r.Namespace == "" {
		return corev1.ObjectReference{}, false
	}
	return r, true
}

// enqueue sends the pod's wake-up. Its deduplication id is the pod's uid alone, so SQS keeps one wake-up
// per pod for five minutes however many Events the pod gets (a new one whenever the pod's
// resourceVersion changed since its last failure), and the intake does not even send a pod it sent within that window (coalescer); a pod still
// pending after that is found by the provisioner's next run or its one-minute backstop. sent is false
// for such a coalesced pod.
func (in *Intake) enqueue(ctx context.Context, pod corev1.ObjectReference) (sent bool, err error) {
	ref := PodRef{Cluster: in.Cluster, Namespace: pod.Namespace, Name: pod.Name, UID: string(pod.UID),
		ResourceVersion: pod.ResourceVersion, ObservedAt: in.Now().UTC()}
	if ref.UID == "" {
		return false, errors.New("the Event names no pod uid")
	}
	if in.coalesce.seen(ref.UID, time.Now()) {
		return false, nil
	}
	body, err := json.Marshal(ref)
	if err != nil {
		return false, err
	}
	if err := in.send(ctx, &queued{uid: ref.UID, body: string(body), group: provisioningqueue.PodGroup(in.Cluster, ref.UID),
		done: make(chan error, 1)}); err != nil {
		return false, fmt.Errorf("sending %s/%s to the provisioning queue: %w", pod.Namespace, pod.Name, err)
	}
	return true, nil
}

func text(status int, msg, result string) Response {
	return Response{Status: status, Body: []byte(msg), Result: result}
}
