package kube

import (
	"context"
	"fmt"
	"hash/fnv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Reason is a Kubernetes Event reason. The values are Karpenter's, so dashboards, alerts and habits
// built on `kubectl get events --field-selector reason=…` keep working.
type Reason string

// Scheduling.
const (
	ReasonFailedScheduling          Reason = "FailedScheduling"
	ReasonNominated                 Reason = "Nominated"
	ReasonNoCompatibleInstanceTypes Reason = "NoCompatibleInstanceTypes"
)

// Disruption and consolidation.
const (
	ReasonDisruptionBlocked          Reason = "DisruptionBlocked"
	ReasonDisruptionLaunching        Reason = "DisruptionLaunching"
	ReasonDisruptionWaitingReadiness Reason = "DisruptionWaitingReadiness"
	ReasonDisruptionTerminating      Reason = "DisruptionTerminating"
	ReasonUnconsolidatable           Reason = "Unconsolidatable"
	ReasonConsolidationCandidate     Reason = "ConsolidationCandidate"
	// ReasonConsolidationApproved is published by the Balanced consolidation policy alone, on the Nodes of
	// a move whose savings-to-disruption score reaches the threshold; ReasonConsolidationRejected on the
	// Nodes of a move it scored below (and, for every policy, of a command that failed its validation).
	ReasonConsolidationApproved Reason = "ConsolidationApproved"
	ReasonConsolidationRejected Reason = "ConsolidationRejected"
	// ReasonDrifted is published on a Node when its claim is found drifted (the Drifted condition's
	// reason is in the message).
	ReasonDrifted Reason = "Drifted"
)

// Termination.
const (
	ReasonEvicted                        Reason = "Evicted"
	ReasonDisrupted                      Reason = "Disrupted"
	ReasonFailedDraining                 Reason = "FailedDraining"
	ReasonAwaitingVolumeDetachment       Reason = "AwaitingVolumeDetachment"
	ReasonTerminationGracePeriodExpiring Reason = "TerminationGracePeriodExpiring"
	// Karpenter also declares FailedTermination, but no code of it publishes that reason (v1.14): a
	// termination that fails shows as FailedDraining, AwaitingVolumeDetachment or the claim's decision
	// records here. It is left out so that no dashboard waits for it.
)

// NodeClaim lifecycle, consistency and repair. NodeClassNotReady is published on a NodePool that launches
// nothing because its EC2NodeClass is missing or not Ready: by the provisioner's run (on the karpenter.sh
// kind, by name) and on the NodePool mirror of nodewright.sh beside its NodeClassReady condition
// (shared/adapters/mirror, with the mirror's UID, so `kubectl describe` shows it).
const (
	ReasonInsufficientCapacityError Reason = "InsufficientCapacityError"
	ReasonNodeClassNotReady         Reason = "NodeClassNotReady"
	ReasonUnregisteredTaintMissing  Reason = "UnregisteredTaintMissing"
	ReasonFailedConsistencyCheck    Reason = "FailedConsistencyCheck"
	ReasonNodeRepairBlocked         Reason = "NodeRepairBlocked"
)

// Pod protection (karpenter.sh/do-not-disrupt).
const (
	ReasonInvalidDoNotDisruptAnnotation  Reason = "InvalidDoNotDisruptAnnotation"
	ReasonDoNotDisruptUntil              Reason = "DoNotDisruptUntil"
	ReasonDoNotDisruptGracePeriodElapsed Reason = "DoNotDisruptGracePeriodElapsed"
)

// AWS interruption handling.
const (
	ReasonSpotInterrupted                        Reason = "SpotInterrupted"
	ReasonSpotRebalanceRecommendation            Reason = "SpotRebalanceRecommendation"
	ReasonInstanceStopping                       Reason = "InstanceStopping"
	ReasonInstanceTerminating                    Reason = "InstanceTerminating"
	ReasonInstanceUnhealthy                      Reason = "InstanceUnhealthy"
	ReasonCapacityReservationInstanceInterrupted Reason = "CapacityReservationInstanceInterrupted"
	ReasonTerminatingOnInterruption              Reason = "TerminatingOnInterruption"
)

// Capacity reservations that end. Karpenter logs these without an Event; Nodewright names them so an
// operator sees on the Node why it was drained or relabelled.
const (
	// ReasonCapacityBlockExpiring: the Node's capacity block ends within 40 minutes; it is drained.
	ReasonCapacityBlockExpiring Reason = "CapacityBlockExpiring"
	// ReasonCapacityReservationEnded: the Node's capacity reservation is no longer active; the Node is
	// relabelled karpenter.sh/capacity-type=on-demand.
	ReasonCapacityReservationEnded Reason = "CapacityReservationEnded"
)

// Event is one Kubernetes Event to publish.
type Event struct {
	Object corev1.ObjectReference
	// Type is corev1.EventTypeNormal or corev1.EventTypeWarning; empty means Normal.
	Type    string
	Reason  Reason
	Message string
}

// PodObject, NodeObject and NodePoolObject name the objects Events are about. A NodePool named by
// NodePoolObject has no object in the cluster (Nodewright keeps it in DynamoDB); its Events still show in
// `kubectl get events` under Karpenter's kind. NodeClaim Events go on the NodeClaim mirror of
// nodewright.sh (mirror.NodeClaimObject, with the mirror's UID that mirror.ClaimEvents fills in), where
// `kubectl describe nodeclaims.nodewright.sh` shows them.
func PodObject(p *corev1.Pod) corev1.ObjectReference {
	return corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name,
		UID: p.UID, ResourceVersion: p.ResourceVersion}
}

// NodeObject names a Node for an Event.
func NodeObject(n *corev1.Node) corev1.ObjectReference {
	return corev1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: n.Name, UID: n.UID}
}

// NodePoolObject names a NodePool for an Event.
func NodePoolObject(name string) corev1.ObjectReference {
	return corev1.ObjectReference{APIVersion: "karpenter.sh/v1", Kind: "NodePool", Name: name}
}

// RecorderOptions tunes a Recorder; zero fields take the defaults.
type RecorderOptions struct {
	// Component is the Event source (default "nodewright"); Instance names the publisher, e.g. the
	// Lambda function.
	Component, Instance string
	// Now is the clock (default time.Now).
	Now func() time.Time
	// DedupeWindow: an Event with the same object, reason and message as one published less than this
	// long ago is dropped (default 2 minutes).
	DedupeWindow time.Duration
	// Rate (Events per second) and Burst bound how many Events are written (defaults 10 and 50).
	Rate  float64
	Burst int
}

const (
	defaultDedupeWindow = 2 * time.Minute
	maxMessageLength    = 1024
	maxDedupeEntries    = 10_000
)

// Recorder publishes core/v1 Events, deduplicated and rate-limited in memory. A Lambda execution
// environment keeps its Recorder between invocations, so duplicates within one warm environment are
// dropped; across environments the API server's own Event handling applies. Safe for concurrent use.
type Recorder struct {
	client kubernetes.Interface
	opts   RecorderOptions

	mu     sync.Mutex
	seen   map[string]time.Time
	tokens float64
	last   time.Time
}

// NewRecorder returns a Recorder that writes Events through client.
func NewRecorder(client kubernetes.Interface, opts RecorderOptions) *Recorder {
	if opts.Component == "" {
		opts.Component = "nodewright"
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.DedupeWindow <= 0 {
		opts.DedupeWindow = defaultDedupeWindow
	}
	if opts.Rate <= 0 {
		opts.Rate = 10
	}
	if opts.Burst <= 0 {
		opts.Burst = 50
	}
	return &Recorder{client: client, opts: opts, seen: map[string]time.Time{}, tokens: float64(opts.Burst)}
}

// Publish writes e unless it duplicates a recent Event or the rate limit is spent; it reports whether
// it wrote. A failed write is forgotten, so publishing the same Event again retries it. Errors are the
// domain errors of errors.go; callers usually log them and carry on, as Events are best effort.
func (r *Recorder) Publish(ctx context.Context, e Event) (bool, error) {
	if e.Type == "" {
		e.Type = corev1.EventTypeNormal
	}
	if len(e.Message) > maxMessageLength {
		e.Message = e.Message[:maxMessageLength-3] + "..."
	}
	key := dedupeKey(e)
	now := r.opts.Now()
	if !r.admit(key, now) {
		return false, nil
	}
	ns := e.Object.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	ts := metav1.NewTime(now)
	ev := &corev1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: eventName(e, now), Namespace: ns},
		InvolvedObject:      e.Object,
		Reason:              string(e.Reason),
		Message:             e.Message,
		Type:                e.Type,
		Source:              corev1.EventSource{Component: r.opts.Component},
		FirstTimestamp:      ts,
		LastTimestamp:       ts,
		Count:               1,
		ReportingController: r.opts.Component,
		ReportingInstance:   r.opts.Instance,
	}
	_, err := r.client.CoreV1().Events(ns).Create(ctx, ev, metav1.CreateOptions{})
	if err = mapError(err); err != nil && !IsConflict(err) {
		r.forget(key)
		return false, fmt.Errorf("publishing %s event for %s %s: %w", e.Reason, e.Object.Kind, e.Object.Name, err)
	}
	return true, nil
}

// admit records the Event as published when it is not a recent duplicate and a rate token is left.
func (r *Recorder) admit(key string, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if at, ok := r.seen[key]; ok && now.Sub(at) < r.opts.DedupeWindow {
		return false
	}
	if !r.last.IsZero() && now.After(r.last) {
		r.tokens = min(float64(r.opts.Burst), r.tokens+now.Sub(r.last).Seconds()*r.opts.Rate)
	}
	if r.last.IsZero() || now.After(r.last) {
		r.last = now
	}
	if r.tokens < 1 {
		return false
	}
	r.tokens--
	if len(r.seen) >= maxDedupeEntries {
		for k, at := range r.seen {
			if now.Sub(at) >= r.opts.DedupeWindow {
				delete(r.seen, k)
			}
		}
	}
	r.seen[key] = now
	return true
}

func (r *Recorder) forget(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.seen, key)
}

func dedupeKey(e Event) string {
	o := e.Object
	return fmt.Sprintf("%s/%s/%s/%s/%s\x00%s\x00%s\x00%s", o.APIVersion, o.Kind, o.Namespace, o.Name, o.UID,
		e.Type, e.Reason, e.Message)
}

// eventName is the object's name, the time in hex nanoseconds (as client-go names Events) and a hash of
// reason and message, so two different Events about one object at one instant do not collide.
func eventName(e Event, now time.Time) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(string(e.Reason) + "\x00" + e.Message))
	name := e.Object.Name
	if len(name) > 200 {
		name = name[:200]
	}
	return fmt.Sprintf("%s.%x%08x", name, now.UnixNano(), h.Sum32())
}
