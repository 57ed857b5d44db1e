package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// Node repair (the NodeRepair feature gate, off by default as in Karpenter), on every sweep:
//
//   - A Node of a registered or initialized claim of Nodewright's is unhealthy when one of RepairPolicies'
//     conditions has its policy's status, or its instance's EC2 instance or system status check is
//     impaired (read once a sweep, at most once every SweepEvery, with DescribeInstanceStatus filtered to
//     impaired instances: the answer grows with the impaired instances, not the fleet; see
//     instance.StatusChecks). Only the Nodes the pass lists and the claims the sweep reads are looked at:
//     no other read.
//   - Guard, per NodePool, as Karpenter's: when more of the pool's nodes (Nodewright's Nodes of its live
//     claims, whatever their lifecycle) are unhealthy than MaxUnhealthyPercent allows, nothing of the pool
//     is repaired; its due nodes get a NodeRepairBlocked Event (so do the NodePool's Events), and a
//     decision is recorded every repairBlockedEvery. The Event goes on the Node because that is where an
//     operator looking at a broken node looks (`kubectl describe node`), and the NodePool has no object in
//     the cluster to describe.
//   - A node unhealthy past its toleration, while its instance runs (listed live this sweep), in service,
//     not handed to the termination flow by this pass and with no disruption request yet, gets one (state.DisruptionRequest with Unhealthy): the
//     disruption run acts on it as on an operator's, for the reason Unhealthy — replacement capacity for
//     its pods first, with a bounded wait, whatever budgets and do-not-disrupt say — and the termination
//     flow drains it forcefully, as Karpenter's repair does (its termination grace ends at once).
//
// The lifecycle removes nothing itself: only the termination flow does.

// repairBlockedEvery is how often a NodePool whose repairs are blocked gets its decision recorded again
// (Karpenter looks at a blocked node again after 5 minutes).
const repairBlockedEvery = 5 * time.Minute

// maxBlockedNodeEvents bounds the NodeRepairBlocked Events a pass publishes per NodePool (on its due
// nodes), so a pool with hundreds of unhealthy nodes does not use up the Event rate.
const maxBlockedNodeEvents = 10

// ReasonUnhealthy is the decision reason (and the disruption reason) of node repair.
const ReasonUnhealthy = "Unhealthy"

// KindNodeRepair and KindNodeRepairBlocked are the decision kinds node repair records.
const (
	KindNodeRepair        = "NodeRepair"
	KindNodeRepairBlocked = "NodeRepairBlocked"
)

// InstanceHealth lists the running instances whose EC2 status checks are impaired;
// *instance.StatusChecks satisfies it.
type InstanceHealth interface {
	Impaired(ctx context.Context) ([]instance.Impaired, error)
}

var _ InstanceHealth = (*instance.StatusChecks)(nil)

// Repair is one node repair requested, for the report and the metric nodeclaims_unhealthy_disrupted_total.
type Repair struct {
	NodePool, Node, Claim, CapacityType string
	// Condition is what was unhealthy, in Karpenter's metric form (snake case): ready,
	// accelerated_hardware_ready, instance_status...
	Condition string
}

// repairMemory is what node repair keeps between passes of one process: when each impaired status
// check of its instances was first seen (for checks EC2 gives no ImpairedSince for; a new process starts
// the clock again, which only delays a repair), and when each blocked NodePool's decision was last
// recorded.
type repairMemory struct {
	mu        sync.Mutex
	firstSeen map[string]time.Time // instance id + "/" + check
	blockedAt map[string]time.Time // NodePool
}

// repairCandidate is a node unhealthy past its toleration.
type repairCandidate struct {
	claim state.Claim
	node  *corev1.Node
	cond  state.UnhealthyCondition
}

// repairNodes is node repair's step of a sweep (see the top of this file).
func (p *passState) repairNodes(ctx context.Context) {
	if !p.w.settings.FeatureGates.NodeRepair {
		return
	}
	now := p.r.deps.Now()
	live := map[string]bool{}
	for _, i := range p.w.instances {
		live[i.ID] = true
	}
	impaired := p.impaired(ctx, now)
	total, unhealthy := map[string]int{}, map[string]int{}
	due := map[string][]repairCandidate{}
	for _, c := range p.w.claims {
		l := p.lifecycle[c.Name]
		if l == state.Deleted || c.NodeName == "" || c.InstanceID == "" {
			continue
		}
		n := p.w.nodeByName(c.NodeName)
		if n == nil || instanceID(n.Spec.ProviderID) != c.InstanceID {
			continue // not the claim's Node (gone, or a name reused): not ours to judge
		}
		total[c.NodePool]++
		cond, ok := unhealthyOf(n, impaired[c.InstanceID], now)
		if !ok {
			continue
		}
		unhealthy[c.NodePool]++
		if (l != state.Registered && l != state.Initialized) || c.DisruptionRequest != nil || n.DeletionTimestamp != nil ||
			p.sent[c.Name] || !live[c.InstanceID] || !repairDue(cond, now) {
			continue
		}
		due[c.NodePool] = append(due[c.NodePool], repairCandidate{claim: c, node: n, cond: cond})
	}
	for _, pool := range slices.Sorted(maps.Keys(due)) {
		if allowed := allowedUnhealthy(total[pool]); unhealthy[pool] > allowed {
			p.repairBlocked(ctx, pool, due[pool], unhealthy[pool], total[pool], allowed)
			continue
		}
		for _, c := range due[pool] {
			p.requestRepair(ctx, c, now)
		}
	}
}

// impaired reads the failed status checks of the sweep's claims' instances, as unhealthy conditions by
// instance id, dated from EC2's ImpairedSince or, without one, from when this process first saw them. A
// read that fails is reported and leaves the Node conditions to decide alone this sweep.
func (p *passState) impaired(ctx context.Context, now time.Time) map[string][]state.UnhealthyCondition {
	if p.r.deps.Health == nil {
		return nil
	}
	list, err := p.r.deps.Health.Impaired(ctx)
	if err != nil {
		p.fail("instance-status", fmt.Errorf("node repair reads no status checks this sweep: %w", err))
		return nil
	}
	ours := map[string]bool{}
	for _, c := range p.w.claims {
		if c.InstanceID != "" {
			ours[c.InstanceID] = true
		}
	}
	m := &p.r.repair
	m.mu.Lock()
	defer m.mu.Unlock()
	seen := map[string]time.Time{}
	out := map[string][]state.UnhealthyCondition{}
	for _, imp := range list {
		if !ours[imp.InstanceID] {
			continue // another cluster's or Karpenter's instance: never counted, never touched
		}
		key := imp.InstanceID + "/" + imp.Check
		first, ok := m.firstSeen[key]
		if !ok {
			first = now.UTC()
		}
		seen[key] = first
		since := imp.Since
		if since.IsZero() {
			since = first
		}
		out[imp.InstanceID] = append(out[imp.InstanceID], state.UnhealthyCondition{Type: imp.Check, Status: impairedStatus,
			Since: since.UTC(), Toleration: ImpairedToleration})
	}
	m.firstSeen = seen // a check no longer impaired is forgotten: if it fails again, its clock starts again
	return out
}

// repairBlocked holds a NodePool's repairs: too many of its nodes are unhealthy.
func (p *passState) repairBlocked(ctx context.Context, pool string, due []repairCandidate, unhealthy, total, allowed int) {
	p.rep.RepairBlocked = append(p.rep.RepairBlocked, pool)
	msg := fmt.Sprintf("more than %d%% of the nodes of NodePool %s are unhealthy (%d of %d; at most %d may be for repair to act), so none of them is repaired",
		MaxUnhealthyPercent, pool, unhealthy, total, allowed)
	for i, c := range due {
		if i == maxBlockedNodeEvents {
			break
		}
		p.event(ctx, c.node, corev1.EventTypeWarning, kube.ReasonNodeRepairBlocked, msg)
	}
	if p.r.deps.Events != nil {
		if _, err := p.r.deps.Events.Publish(ctx, kube.Event{Object: kube.NodePoolObject(pool), Type: corev1.EventTypeWarning,
			Reason: kube.ReasonNodeRepairBlocked, Message: msg}); err != nil {
			p.fail("nodepool/"+pool, err)
		}
	}
	if !p.r.repair.blockedDue(pool, p.r.deps.Now()) {
		return
	}
	for i, c := range due {
		if i == maxBlockedNodeEvents {
			break
		}
		p.decide(ctx, "node/"+c.node.Name, KindNodeRepairBlocked, string(kube.ReasonNodeRepairBlocked),
			fmt.Sprintf("%s has been %s=%s since %s; %s", c.node.Name, c.cond.Type, c.cond.Status, c.cond.Since.Format(time.RFC3339), msg),
			map[string]string{"nodePool": pool, "claim": c.claim.Name, "unhealthy": fmt.Sprint(unhealthy), "nodes": fmt.Sprint(total)})
	}
}

// blockedDue reports whether a blocked pool's decision is due (never recorded, or repairBlockedEvery
// ago), and if so notes it as recorded now.
func (m *repairMemory) blockedDue(pool string, now time.Time) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if last, ok := m.blockedAt[pool]; ok && now.Sub(last) < repairBlockedEvery {
		return false
	}
	if m.blockedAt == nil {
		m.blockedAt = map[string]time.Time{}
	}
	m.blockedAt[pool] = now
	return true
}

// errRepairNotDue abandons a repair request: the claim left service or got a request since the pass read it.
var errRepairNotDue = errors.New("claim no longer in service or already asked to be disrupted")

// requestRepair writes the disruption request of an unhealthy node's claim, conditioned on the claim
// being in service with no request yet, and records the decision.
func (p *passState) requestRepair(ctx context.Context, c repairCandidate, now time.Time) {
	subject := "nodeclaim/" + c.claim.Name
	held := now.Sub(c.cond.Since).Round(time.Second)
	why := fmt.Sprintf("%s=%s for %s (tolerated for %s)", c.cond.Type, c.cond.Status, held, c.cond.Toleration)
	cond := c.cond
	req := state.DisruptionRequest{Reason: why, RequestedAt: now.UTC(), By: state.RepairRequester, Unhealthy: &cond}
	_, err := p.r.deps.Store.UpdateClaim(ctx, c.claim.Name, func(cur *state.Claim) error {
		if !cur.Lifecycle.InService() || cur.DisruptionRequest != nil {
			return errRepairNotDue
		}
		cur.DisruptionRequest = &req
		return nil
	})
	if errors.Is(err, errRepairNotDue) {
		return
	}
	if err != nil {
		p.fail(subject, fmt.Errorf("requesting the repair of node %s: %w", c.node.Name, err))
		return
	}
	r := Repair{NodePool: c.claim.NodePool, Node: c.node.Name, Claim: c.claim.Name, CapacityType: c.claim.CapacityType,
		Condition: snakeCase(c.cond.Type)}
	p.rep.Repairs = append(p.rep.Repairs, r)
	msg := fmt.Sprintf("node %s is unhealthy: %s; its replacement is requested (the disruption run launches capacity for its pods first, then it is drained)",
		c.node.Name, why)
	details := map[string]string{"nodePool": r.NodePool, "node": r.Node, "claim": r.Claim, "condition": c.cond.Type,
		"status": c.cond.Status, "since": c.cond.Since.Format(time.RFC3339), "toleration": c.cond.Toleration.String()}
	p.decide(ctx, subject, KindNodeRepair, ReasonUnhealthy, msg, details)
	p.decide(ctx, "node/"+c.node.Name, KindNodeRepair, ReasonUnhealthy, msg, details)
}

// snakeCase writes a condition type as Karpenter's metric label does: AcceleratedHardwareReady →
// accelerated_hardware_ready.
func snakeCase(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}
