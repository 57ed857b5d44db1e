package disruptionrun

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/core/disruption"
)

// announceCandidates publishes ConsolidationCandidate on each Node of an Underutilized command the engine
// chose, before its validation, as Karpenter does when its consolidation computes a command (not for
// Empty, drifted or expired nodes: Karpenter's other methods publish no such Event). A node is announced
// once per candidacy: again only when the command it is part of changes, or KeptEvery after it was last
// announced, so a command decided and rejected every minute does not write an Event a minute per node.
func (r *Runner) announceCandidates(ctx context.Context, cmd disruption.Command, rep *Report) {
	if cmd.Reason != disruption.ReasonUnderutilized {
		return
	}
	now := r.deps.Now()
	var events []kube.Event
	r.mu.Lock()
	for name, m := range r.candidates {
		if now.Sub(m.at) >= r.cfg.KeptEvery {
			delete(r.candidates, name) // forgets nodes long gone, so the memo stays as small as the candidacies
		}
	}
	for _, n := range cmd.Nodes {
		msg := candidateMessage(cmd, n)
		if m, ok := r.candidates[n.Name]; ok && m.reason == msg {
			continue
		}
		r.candidates[n.Name] = keptMemo{reason: msg, at: now}
		events = append(events, kube.Event{Object: nodeRef(n.Name), Reason: kube.ReasonConsolidationCandidate, Message: msg})
	}
	r.mu.Unlock()
	for _, e := range events {
		r.publish(ctx, e, rep)
	}
}

// candidateMessage says what consolidation means to do with the node n of cmd, and what it saves.
func candidateMessage(cmd disruption.Command, n disruption.CommandNode) string {
	what := fmt.Sprintf("%s node %s", cmd.Action, n.Name)
	if len(cmd.Nodes) > 1 {
		what += fmt.Sprintf(" (one of %d nodes consolidated together)", len(cmd.Nodes))
	}
	if len(cmd.Replacements) > 0 {
		what += " with " + replacementSummary(cmd)
	}
	return fmt.Sprintf("Consolidation candidate: %s, saving $%.4f/hour", what, cmd.SavingsPerHour)
}

// replacementSummary names the replacement a command launches: its NodePool and cheapest instance type.
func replacementSummary(cmd disruption.Command) string {
	var parts []string
	for _, cp := range cmd.Replacements {
		parts = append(parts, fmt.Sprintf("a %s node of NodePool %s", cp.InstanceType, cp.NodePool))
	}
	return strings.Join(parts, " and ")
}

// rejectedEvent is the Event a command that was decided but not executed leaves on one of its Nodes: an
// Underutilized command that failed its validation is ConsolidationRejected, as Karpenter publishes it
// when its consolidation's validation fails; anything else (an Empty command's validation, the budget
// ledger, a replacement back-off, recording the command) is DisruptionBlocked.
func rejectedEvent(cmd disruption.Command, node, stage, why string) kube.Event {
	if stage == stageValidation && cmd.Reason == disruption.ReasonUnderutilized {
		return kube.Event{Object: nodeRef(node), Type: corev1.EventTypeNormal, Reason: kube.ReasonConsolidationRejected,
			Message: fmt.Sprintf("Consolidation rejected: %s of node %s no longer holds after validation: %s", cmd.Action, node, why)}
	}
	return kube.Event{Object: nodeRef(node), Type: corev1.EventTypeNormal, Reason: kube.ReasonDisruptionBlocked,
		Message: "consolidation " + stage + " failed: " + why}
}

// stageValidation is the stage of a command rejected by its re-check on a fresh snapshot.
const stageValidation = "validation"
