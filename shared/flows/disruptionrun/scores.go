package disruptionrun

import (
	"context"
	"fmt"
	"strings"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/core/disruption"
)

// Bounds of what one run reports of the Balanced policy's scores.
const (
	// MaxReportedScores bounds Report.Scores (and so the score samples one run writes).
	MaxReportedScores = 100
	// MaxScoreEvents bounds the ConsolidationApproved and ConsolidationRejected Events one run
	// publishes for scored moves (a rejection per candidate could otherwise write one per node).
	MaxScoreEvents = 20
)

// publishScores reports what the Balanced policy made of a decision's moves: each into Report.Scores
// (the score metric reads them), and an Event on each of their Nodes: ConsolidationApproved for the
// command it approved, ConsolidationRejected for the moves it scored below the threshold. Karpenter
// publishes the approval alone (on the Node and NodeClaim, or the NodePool for several nodes) and
// counts rejections in metrics only; Nodewright also names the rejection on the Node, since the dry
// run and `nodewright explain` read the same reason. A node's Event is published again only when its
// message changes or KeptEvery after it was last published, and at most MaxScoreEvents per run.
func (r *Runner) publishScores(ctx context.Context, res disruption.Result, rep *Report) {
	var moves []disruption.ScoredMove
	for _, c := range res.Commands {
		if c.Score != nil {
			moves = append(moves, disruption.ScoredMove{Method: c.Method, Action: c.Action, Nodes: commandNodeNames(c),
				SavingsPerHour: c.SavingsPerHour, Score: *c.Score})
		}
	}
	moves = append(moves, res.Rejected...)
	if len(moves) == 0 {
		return
	}
	now := r.deps.Now()
	var events []kube.Event
	r.mu.Lock()
	for name, m := range r.scored {
		if now.Sub(m.at) >= r.cfg.KeptEvery {
			delete(r.scored, name)
		}
	}
	for _, m := range moves {
		if len(rep.Scores) < MaxReportedScores {
			rep.Scores = append(rep.Scores, m)
		}
		reason := kube.ReasonConsolidationRejected
		if m.Score.Approved {
			reason = kube.ReasonConsolidationApproved
		}
		msg := scoreMessage(m)
		for _, n := range m.Nodes {
			if rep.ScoreEvents+len(events) >= MaxScoreEvents {
				break
			}
			if memo, ok := r.scored[n]; ok && memo.reason == msg {
				continue
			}
			r.scored[n] = keptMemo{reason: msg, at: now}
			events = append(events, kube.Event{Object: nodeRef(n), Reason: reason, Message: msg})
		}
	}
	r.mu.Unlock()
	rep.ScoreEvents += len(events)
	for _, e := range events {
		r.publish(ctx, e, rep)
	}
}

// scoreMessage says what the move would do and how the Balanced policy scored it.
func scoreMessage(m disruption.ScoredMove) string {
	what := fmt.Sprintf("%s node %s", m.Action, m.Nodes[0])
	if len(m.Nodes) > 1 {
		what = fmt.Sprintf("%s nodes %s", m.Action, strings.Join(m.Nodes, ", "))
		if len(m.Nodes) > 5 {
			what = fmt.Sprintf("%s %d nodes (%s, ...)", m.Action, len(m.Nodes), strings.Join(m.Nodes[:5], ", "))
		}
	}
	return fmt.Sprintf("Balanced consolidation: %s saving $%.4f/hour is %s", what, m.SavingsPerHour, m.Score.Describe())
}

func commandNodeNames(c disruption.Command) []string {
	out := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		out[i] = n.Name
	}
	return out
}
