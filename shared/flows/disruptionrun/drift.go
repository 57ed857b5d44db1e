package disruptionrun

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/disruption"
	"github.com/nodewright/nodewright/shared/core/drift"
	"github.com/nodewright/nodewright/shared/flows/driftinput"
	"github.com/nodewright/nodewright/shared/flows/termination"
)

// KindDrifted is the decision recorded under node/NAME and nodeclaim/NAME when a claim is found
// drifted (or no longer drifted); its details say what drifted.
const KindDrifted = "Drifted"

// driftChange is a change of a claim's drift record that a read found: its Drifted condition set,
// changed or cleared, or its hashes re-stamped after a hash-version change.
type driftChange struct {
	claim, node, pool string
	// set is the new condition; nil with clear set removes it.
	set   *state.DriftCondition
	clear bool
	// restamp holds hashes computed with the current hash versions (not drift).
	restamp *drift.Restamp
}

// judge fills node's drift, expiry and request fields from its claim c, and notes in w the change
// of c's drift record, if any. A detection that could not decide leaves the claim's condition as it
// is and the node undrifted for this run: nothing is rolled on a guess.
func (r *Runner) judge(w *world, node *disruption.Node, c state.Claim) {
	in := &w.input
	if r := c.DisruptionRequest; r != nil {
		node.Requested, node.RequestReason = true, r.Reason
		if r.Unhealthy != nil { // node repair's request: disrupted for the reason Unhealthy
			node.Unhealthy = firstOf(r.Reason, r.Unhealthy.Type+"="+r.Unhealthy.Status)
		}
	}
	if _, at := drift.Expired(w.launches.Lifetime(c), in.Now); !at.IsZero() {
		node.ExpiresAt = at
	}
	res := w.launches.Drift(c, driftinput.Observed{NodeLabels: node.Node.Labels, Now: in.Now})
	ch := driftChange{claim: c.Name, node: node.Name(), pool: c.NodePool}
	switch res.Verdict {
	case drift.Drifted:
		// The condition dates from when it was set with its reason, which orders the drifted nodes' roll.
		node.Drifted, node.DriftWhy, node.DriftedSince = string(res.Reason), detailText(res.Details), in.Now.UTC()
		if c.Drifted != nil && c.Drifted.Reason == string(res.Reason) {
			node.DriftedSince = c.Drifted.Since
		}
		if c.Drifted == nil || c.Drifted.Reason != string(res.Reason) || !maps.Equal(c.Drifted.Details, res.Details) {
			ch.set = &state.DriftCondition{Reason: string(res.Reason), Details: res.Details, Since: node.DriftedSince}
		}
	case drift.NotDrifted:
		ch.clear = c.Drifted != nil
	}
	if res.Restamp != nil && c.Drifted == nil && ch.set == nil {
		ch.restamp = res.Restamp
	}
	if ch.set != nil || ch.clear || ch.restamp != nil {
		w.driftChanges = append(w.driftChanges, ch)
	}
	if node.Drifted != "" {
		w.drifted[c.NodePool+"/"+node.Drifted]++
	}
	if !node.ExpiresAt.IsZero() && !in.Now.Before(node.ExpiresAt) {
		w.expired[c.NodePool]++
	}
}

// recordDrift writes the drift changes a read found: the claims' Drifted conditions (set, changed or
// cleared) and re-stamped hashes, each with the claim's version check, a Drifted event on the Node and
// a decision record (for `nodewright explain`) when a condition is set or cleared. Failures are
// reported and retried by the next run: the engine already acts on what this read detected.
func (r *Runner) recordDrift(ctx context.Context, w *world, rep *Report) {
	now := r.deps.Now()
	var ds []state.Decision
	restamps := 0
	for _, ch := range w.driftChanges {
		if ch.set == nil && !ch.clear {
			// Re-stamping only keeps records current: a run does a bounded share of them, so a cluster
			// upgraded to a new hash version does not spend one run's time on thousands of writes.
			if restamps++; restamps > MaxRestampsPerRun {
				continue
			}
		}
		updated, err := r.deps.Store.UpdateClaim(ctx, ch.claim, func(c *state.Claim) error {
			if !c.Lifecycle.InService() {
				return errClaimGone
			}
			switch {
			case ch.set != nil:
				d := *ch.set
				if c.Drifted == nil || c.Drifted.Reason != d.Reason {
					// A new condition is dated when recorded (the run's read may have taken a while), as
					// Karpenter dates a condition when its controller writes it.
					d.Since = r.deps.Now().UTC()
				}
				c.Drifted = &d
			case ch.clear:
				c.Drifted = nil
			}
			if rs := ch.restamp; rs != nil && c.Drifted == nil {
				if rs.TemplateHashVersion != "" {
					c.TemplateHash, c.TemplateHashVersion = rs.TemplateHash, rs.TemplateHashVersion
				}
				if rs.NodeClassHashVersion != "" {
					c.NodeClassHash, c.NodeClassHashVersion = rs.NodeClassHash, rs.NodeClassHashVersion
				}
			}
			return nil
		})
		if errors.Is(err, errClaimGone) {
			continue
		}
		if err != nil {
			rep.Errors = append(rep.Errors, fmt.Sprintf("recording drift of claim %s: %v", ch.claim, err))
			continue
		}
		if ch.restamp != nil && ch.set == nil && !ch.clear {
			rep.Restamped++
		}
		if ch.set == nil && !ch.clear {
			continue
		}
		rep.followed.claim(updated)
		msg := "no longer drifted"
		details := map[string]string{"nodePool": ch.pool, "claim": ch.claim}
		if ch.set != nil {
			msg = fmt.Sprintf("drifted: %s", ch.set.Reason)
			if t := detailText(ch.set.Details); t != "" {
				msg += " (" + t + ")"
			}
			maps.Copy(details, ch.set.Details)
			details["reason"] = ch.set.Reason
		}
		id := "drift-" + strconv.FormatInt(now.UnixMilli(), 10)
		for _, subject := range []string{"node/" + ch.node, "nodeclaim/" + ch.claim} {
			ds = append(ds, state.Decision{Subject: subject, ID: id, Kind: KindDrifted, Reason: firstOf(reasonOf(ch.set), "NotDrifted"),
				Message: msg, At: now, Details: details})
		}
		r.publish(ctx, kube.Event{Object: nodeRef(ch.node), Reason: kube.ReasonDrifted, Message: msg}, rep)
	}
	if len(ds) > 0 {
		if err := r.deps.Store.RecordDecisions(ctx, ds); err != nil {
			rep.Errors = append(rep.Errors, fmt.Sprintf("recording %d drift decisions: %v", len(ds), err))
		}
	}
	rep.Drifted, rep.Expired = w.drifted, w.expired
}

// MaxRestampsPerRun bounds the claims one run re-stamps after a hash-version change; the rest are
// re-stamped by the next runs.
const MaxRestampsPerRun = 100

// errClaimGone abandons a drift update of a claim that left service meanwhile.
var errClaimGone = errors.New("claim no longer in service")

func reasonOf(c *state.DriftCondition) string {
	if c == nil {
		return ""
	}
	return c.Reason
}

// detailText words drift details for an operator: "oldImageId ami-1, newImageId ami-2", keys sorted.
func detailText(d map[string]string) string {
	parts := make([]string, 0, len(d))
	for _, k := range slices.Sorted(maps.Keys(d)) {
		parts = append(parts, k+" "+d[k])
	}
	return strings.Join(parts, ", ")
}

// requestedWithoutNode hands claims an operator (or node repair) asked to disrupt that have no Node in the cluster (not
// registered yet, or their Node is gone) straight to the termination flow: there is nothing to drain
// and no pod to make room for. A claim already on its way out is left alone.
func (r *Runner) requestedWithoutNode(ctx context.Context, w *world, rep *Report) {
	onNode := map[string]bool{}
	for _, c := range w.claimOf {
		onNode[c.Name] = true
	}
	now := r.deps.Now().UTC()
	for _, c := range w.claims {
		if c.DisruptionRequest == nil || !c.Lifecycle.InService() || onNode[c.Name] || w.reserved[c.Name] {
			continue
		}
		reason, who := disruption.ReasonManual, "an operator"
		if c.DisruptionRequest.Unhealthy != nil {
			reason, who = disruption.ReasonUnhealthy, "node repair"
		}
		req := termination.Request{Claim: c.Name, Reason: string(reason), RequestedAt: now}
		if err := r.deps.Terminations.Send(ctx, req); err != nil {
			rep.Errors = append(rep.Errors, fmt.Sprintf("claim %s: %v", c.Name, err))
			continue
		}
		if rep.HandedOver == nil {
			rep.HandedOver = map[string]int{}
		}
		rep.HandedOver[c.NodePool+"/"+string(reason)]++
		r.record(ctx, []state.Decision{{Subject: "nodeclaim/" + c.Name, ID: "manual-" + strconv.FormatInt(now.UnixMilli(), 10),
			Kind: KindDisrupt, Reason: string(reason), At: now,
			Message: "disruption requested by " + who + "; the claim has no Node, so it is terminated at once",
			Details: map[string]string{"nodePool": c.NodePool, "reason": c.DisruptionRequest.Reason}}}, rep)
	}
}
