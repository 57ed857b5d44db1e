package termination

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/nodewright/nodewright/shared/adapters/crash"
	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/drain"
)

// ExcludeFromLoadBalancersLabel takes a draining Node out of external load balancers' target sets.
const ExcludeFromLoadBalancersLabel = "node.kubernetes.io/exclude-from-external-load-balancers"

// disruptedTaint keeps new pods off a draining Node.
var disruptedTaint = corev1.Taint{Key: drain.DisruptedTaintKey, Effect: corev1.TaintEffectNoSchedule}

// tally counts what one pass over the plan did.
type tally struct {
	evicted, blocked, deleted, terminating, held int
	// codes counts eviction requests by the API server's answer, as pods_eviction_requests does.
	codes map[string]int
	// failures are the errors of the evictions and deletions that failed (they count as blocked).
	failures []string
}

// removed is how many pods this pass actually evicted or deleted.
func (t tally) removed() int { return t.codes["200"] + t.deleted }

// progressing reports whether pods are leaving, so the next look should come soon.
func (t tally) progressing() bool { return t.evicted+t.deleted+t.terminating > 0 }

// drain takes one step of the Node's drain. It finishes when the Node is gone, or drained and its
// volumes detached (or the wait for them is over).
func (s *Service) drain(ctx context.Context, claim state.Claim, in delivery) (outcome, error) {
	if claim.NodeName == "" {
		return outcome{finished: true}, nil // disrupted before its Node registered: nothing runs there
	}
	node, err := s.deps.Kube.CoreV1().Nodes().Get(ctx, claim.NodeName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return outcome{finished: true}, nil // nothing can run on a Node that is gone
	}
	if err != nil {
		return outcome{}, fmt.Errorf("reading node %s: %w", claim.NodeName, err)
	}
	if gone, err := s.instanceTerminated(ctx, claim); err != nil || gone {
		if gone {
			err = s.decide(ctx, claim.Name, "InstanceGone", in.req, fmt.Sprintf(
				"instance %s is terminated, so nothing runs on node %s any more: no drain", claim.InstanceID, node.Name), nil)
		}
		return outcome{finished: gone}, err
	}
	if err := s.cordon(ctx, node); err != nil {
		return outcome{}, err
	}
	deadline, err := s.deadline(ctx, claim, in.req)
	if err != nil {
		return outcome{}, err
	}
	if deadline != nil && in.req.Attempt <= 1 {
		s.publish(ctx, kube.Event{Object: kube.NodeObject(node), Reason: kube.ReasonTerminationGracePeriodExpiring,
			Message: fmt.Sprintf("All pods will be deleted by %s", deadline.UTC().Format(time.RFC3339))})
	}
	now := s.deps.Now()
	if wait, why, err := s.gate(ctx, claim, deadline, now); err != nil || wait {
		if wait && (in.req.Attempt <= 1 || in.req.Attempt%10 == 0) {
			err = s.decide(ctx, claim.Name, "AwaitingReplacement", in.req, fmt.Sprintf("node %s: %s before evicting", node.Name, why),
				deadlineDetails(deadline))
		}
		return outcome{delay: replacementPoll}, err
	}
	pods, err := s.podsOn(ctx, node.Name)
	if err != nil {
		return outcome{}, err
	}
	plan := drain.Of(drain.Input{Pods: pods, Now: now, Deadline: deadline})
	for _, bad := range plan.Invalid {
		// The Recorder drops a repeat of the same Event, so a drain that looks again every few seconds
		// does not flood the pod's Events.
		s.publish(ctx, kube.Event{Object: kube.PodObject(bad.Pod), Type: corev1.EventTypeWarning,
			Reason: kube.ReasonInvalidDoNotDisruptAnnotation, Message: bad.Reason})
	}
	for _, tp := range plan.Timed {
		s.publish(ctx, protectionEvent(node, tp))
	}
	if plan.Drained {
		return s.drained(ctx, claim, node, in, deadline, now)
	}
	t, err := s.apply(ctx, node, plan, in.req)
	if err != nil {
		return outcome{}, err
	}
	if (!t.progressing() || len(t.failures) > 0) && (in.req.Attempt <= 1 || in.req.Attempt%10 == 0) {
		err = s.decide(ctx, claim.Name, "DrainBlocked", in.req, blockedMessage(node.Name, t), blockedDetails(deadline, t))
	}
	return outcome{delay: redriveDelay(t.progressing(), in.req.Attempt, plan.NextDeadlineDelete, now,
		s.cfg.ProgressDelay, s.cfg.BlockedDelay), stats: stepStats{evictions: t.codes, podsDrained: t.removed()}}, err
}

// cordon taints the Node karpenter.sh/disrupted:NoSchedule and labels it out of external load
// balancers, skipping what it already has.
func (s *Service) cordon(ctx context.Context, node *corev1.Node) error {
	tainted := false
	for i := range node.Spec.Taints {
		tainted = tainted || node.Spec.Taints[i].MatchTaint(&disruptedTaint)
	}
	if !tainted {
		if err := s.deps.Actions.Taint(ctx, node.Name, disruptedTaint); err != nil {
			return err
		}
	}
	if node.Labels[ExcludeFromLoadBalancersLabel] != "true" {
		v := "true"
		return s.deps.Actions.Label(ctx, node.Name, map[string]*string{ExcludeFromLoadBalancersLabel: &v})
	}
	return nil
}

// podsOn lists the pods bound to the Node.
func (s *Service) podsOn(ctx context.Context, node string) ([]*corev1.Pod, error) {
	list, err := s.deps.Kube.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node).String()})
	if err != nil {
		return nil, fmt.Errorf("listing pods of node %s: %w", node, err)
	}
	pods := make([]*corev1.Pod, 0, len(list.Items))
	for i := range list.Items {
		if list.Items[i].Spec.NodeName == node { // clients that ignore field selectors
			pods = append(pods, &list.Items[i])
		}
	}
	return pods, nil
}

// apply carries out the plan's evictions and deadline deletions, with Karpenter's Events. A pod that
// could not be evicted or deleted — refused by a budget, or any error for that one pod — is counted as
// blocked, with a FailedDraining Event saying why; it never fails the delivery, which is re-driven
// instead, so a drain stuck on one pod is never given up.
func (s *Service) apply(ctx context.Context, node *corev1.Node, plan drain.Plan, req Request) (tally, error) {
	t := tally{codes: map[string]int{}}
	var mu sync.Mutex
	g, gctx := crash.WithContext(ctx)
	g.SetLimit(evictionConcurrency)
	for _, d := range plan.Decisions {
		if d.Action == drain.Wait {
			if d.Pod.DeletionTimestamp != nil {
				t.terminating++
			} else {
				t.held++
			}
			continue
		}
		g.Go(func() error {
			r := s.act(gctx, node, d, req)
			mu.Lock()
			defer mu.Unlock()
			t.add(r)
			return nil
		})
	}
	err := g.Wait()
	return t, err
}

// evictionConcurrency is how many evictions and deletions of one drain step are in flight at once: a
// 110-pod Node's step is one round trip per 16 pods rather than one per pod, and the API server settles
// concurrent evictions under one PodDisruptionBudget itself (an eviction the budget no longer allows is
// refused with 429, and looked at again on the next step).
const evictionConcurrency = 16

// actResult is what one eviction or deletion came to.
type actResult struct {
	code    string // the eviction's answer as counted in tally.codes; "" for a deletion
	evicted bool
	deleted bool
	failure string // an error for this pod (it counts as blocked)
	blocked bool
}

// add counts one pod's result.
func (t *tally) add(r actResult) {
	if r.code != "" {
		t.codes[r.code]++
	}
	switch {
	case r.evicted:
		t.evicted++
	case r.deleted:
		t.deleted++
	case r.blocked:
		t.blocked++
		if r.failure != "" {
			t.failures = append(t.failures, r.failure)
		}
	}
}

// act evicts or deletes one pod of the plan, with Karpenter's Events.
func (s *Service) act(ctx context.Context, node *corev1.Node, d drain.Decision, req Request) actResult {
	ref := kube.PodRef{Namespace: d.Pod.Namespace, Name: d.Pod.Name, UID: d.Pod.UID}
	if d.Action == drain.Delete {
		grace := d.GracePeriod
		if err := s.deps.Actions.DeletePod(ctx, ref, kube.DeleteOptions{GracePeriod: &grace}); err != nil {
			s.publish(ctx, kube.Event{Object: kube.NodeObject(node), Type: corev1.EventTypeWarning, Reason: kube.ReasonFailedDraining,
				Message: fmt.Sprintf("Failed to drain node, deleting pod %s: %v", ref, err)})
			return actResult{blocked: true, failure: err.Error()}
		}
		s.publish(ctx, kube.Event{Object: kube.PodObject(d.Pod), Reason: kube.ReasonDisrupted,
			Message: fmt.Sprintf("Deleting the pod to meet node %s's termination deadline, with a grace period of %s", node.Name, grace)})
		return actResult{deleted: true}
	}
	res, err := s.deps.Actions.Evict(ctx, ref)
	switch {
	case kube.IsPDBMisconfigured(err):
		s.publish(ctx, kube.Event{Object: kube.NodeObject(node), Type: corev1.EventTypeWarning, Reason: kube.ReasonFailedDraining,
			Message: fmt.Sprintf("Failed to drain node, evicting pod %s: %v", ref, err)})
		return actResult{code: "500", blocked: true}
	case err != nil:
		// Whatever answered (a fail-closed admission webhook, a throttled or failing API server), the
		// pod stays, so the drain is blocked on it and looks again later, like a budget's refusal.
		s.publish(ctx, kube.Event{Object: kube.NodeObject(node), Type: corev1.EventTypeWarning, Reason: kube.ReasonFailedDraining,
			Message: fmt.Sprintf("Failed to drain node, evicting pod %s: %v", ref, err)})
		return actResult{code: "error", blocked: true, failure: err.Error()}
	case res.Outcome == kube.Blocked:
		s.publish(ctx, kube.Event{Object: kube.NodeObject(node), Type: corev1.EventTypeWarning, Reason: kube.ReasonFailedDraining,
			Message: fmt.Sprintf("Failed to drain node, evicting pod %s violates a PDB: %s", ref, res.Reason)})
		return actResult{code: "429", blocked: true}
	case res.Outcome == kube.Evicted:
		s.publish(ctx, kube.Event{Object: kube.PodObject(d.Pod), Reason: kube.ReasonEvicted,
			Message: fmt.Sprintf("Evicted pod: node %s is being terminated (%s)", node.Name, req.Reason)})
		return actResult{code: "200", evicted: true}
	default: // already gone
		return actResult{code: "404", evicted: true}
	}
}

// publish writes an Event; Events are best effort, so a failure is dropped.
func (s *Service) publish(ctx context.Context, e kube.Event) {
	if s.deps.Events != nil {
		_, _ = s.deps.Events.Publish(ctx, e)
	}
}

// blockedMessage is the DrainBlocked decision's message: what holds the drain, and the first error.
func blockedMessage(node string, t tally) string {
	msg := fmt.Sprintf("node %s: %d pods refused by PodDisruptionBudgets, %d held by %s or a later tier", node,
		t.blocked-len(t.failures), t.held, drain.DoNotDisruptAnnotation)
	if len(t.failures) > 0 {
		msg += fmt.Sprintf(", %d could not be evicted (%s)", len(t.failures), t.failures[0])
	}
	return msg
}

// maxRecordedFailures bounds the errors a DrainBlocked decision keeps, so a large Node's record stays small.
const maxRecordedFailures = 10

// blockedDetails are the DrainBlocked decision's details: the deadline and the failed calls' errors.
func blockedDetails(deadline *time.Time, t tally) map[string]string {
	d := deadlineDetails(deadline)
	if len(t.failures) > 0 {
		if d == nil {
			d = map[string]string{}
		}
		d["errors"] = strings.Join(t.failures[:min(len(t.failures), maxRecordedFailures)], "; ")
	}
	return d
}

func deadlineDetails(deadline *time.Time) map[string]string {
	if deadline == nil {
		return nil
	}
	return map[string]string{"deadline": deadline.UTC().Format(time.RFC3339)}
}
