package disruptionrun

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/disruption"
	"github.com/nodewright/nodewright/shared/flows/provisioning"
)

// Static scale-down's reason and method: the reason is what the termination request and the budget
// carry (only budgets that list no reasons hold it, since Karpenter's budget reasons name Empty, Drifted
// and Underutilized alone), the method what the command record says.
const (
	ReasonOverprovisioned  disruption.Reason = "Overprovisioned"
	MethodStaticScaleDown  disruption.Method = "StaticScaleDown"
	staticPickUnlaunched                     = "not launched yet"
	staticPickUnregistered                   = "launched, no Node yet"
	staticPickEmpty                          = "empty"
	staticPickCost                           = "lowest disruption cost"
)

// staticPick is one claim a static pool gives up, and which rung of Karpenter's order took it.
type staticPick struct {
	claim state.Claim
	node  string // "" when the claim has no Node
	why   string
	cost  float64 // the node's disruption cost (Karpenter's rescheduling cost × lifetime remaining)
}

// staticScaleDown is what one static pool gives up in a run.
type staticScaleDown struct {
	pool     string
	replicas int64
	// live counts the pool's claims that stand for a node it keeps: active (provisioning.CountStatic)
	// and held by no disruption command.
	live  int64
	picks []staticPick
	// held says why fewer claims were picked than the surplus (budget, do-not-disrupt, the run's bound).
	held []string
}

// surplus is how many claims the pool has above replicas.
func (s staticScaleDown) surplus() int64 { return max(s.live-s.replicas, 0) }

// planStaticScaleDown picks the claims static pool sp gives up when it has more live claims than
// replicas, in Karpenter's order: claims not launched yet, then launched without a Node, then empty
// nodes (no pod that must move), then the others by disruption cost, lowest first. nodes are the
// engine's view of the run's Nodes (their pods and claims); reserved the claims active commands hold;
// allowed the pool's budget allowance for ReasonOverprovisioned, which only picks with a Node use (a
// claim without one disrupts nothing); left bounds the picks of the run. A node whose own
// do-not-disrupt annotation or a pod's protects it, or that is already disrupting, is never picked
// (Karpenter takes protected nodes last and waits in the drain; Nodewright decides nothing for them and
// says so). Pure.
func planStaticScaleDown(sp staticPool, claims []state.Claim, nodes []disruption.Node, reserved map[string]bool,
	now time.Time, allowed, left int) staticScaleDown {
	out := staticScaleDown{pool: sp.name(), replicas: sp.replicas}
	onNode := map[string]*disruption.Node{}
	for i := range nodes {
		if n := &nodes[i]; n.NodePool == out.pool && n.Claim != "" {
			onNode[n.Claim] = n
		}
	}
	var nodeless []staticPick
	var empty, busy []staticPick
	protected := 0
	for i := range claims {
		c := &claims[i]
		if c.NodePool != out.pool || reserved[c.Name] || provisioning.CountStatic([]state.Claim{*c}, out.pool).Active == 0 {
			continue
		}
		out.live++
		n, ok := onNode[c.Name]
		switch {
		case !ok && (c.Lifecycle == state.Pending || c.LaunchedAt == nil):
			nodeless = append(nodeless, staticPick{claim: *c, why: staticPickUnlaunched})
		case !ok:
			nodeless = append(nodeless, staticPick{claim: *c, why: staticPickUnregistered})
		case n.Disrupting || n.Node.DeletionTimestamp != nil || hasDisruptedTaint(n.Node):
			protected++ // going already, by another flow: not counted twice
			out.live--
		case staticProtection(n, now) != "":
			protected++
			out.held = append(out.held, fmt.Sprintf("node %s kept: %s", n.Name(), staticProtection(n, now)))
		default:
			var pods []*corev1.Pod
			for _, p := range n.Pods {
				if disruption.Reschedulable(p) {
					pods = append(pods, p)
				}
			}
			p := staticPick{claim: *c, node: n.Name(), cost: disruption.RescheduleDisruptionCost(pods) * lifetimeRemaining(n, now)}
			if len(pods) == 0 {
				p.why = staticPickEmpty
				empty = append(empty, p)
			} else {
				p.why = staticPickCost
				busy = append(busy, p)
			}
		}
	}
	want := out.surplus()
	if want == 0 {
		out.held = nil
		return out
	}
	// Not launched before launched, newest first within each rung (the furthest from serving), then by name.
	slices.SortFunc(nodeless, func(a, b staticPick) int {
		if a.why != b.why {
			return cmp.Compare(rung(a.why), rung(b.why))
		}
		if c := b.claim.CreatedAt.Compare(a.claim.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.claim.Name, b.claim.Name)
	})
	slices.SortFunc(empty, func(a, b staticPick) int { return cmp.Compare(a.node, b.node) })
	slices.SortFunc(busy, func(a, b staticPick) int {
		if c := cmp.Compare(a.cost, b.cost); c != 0 {
			return c
		}
		return cmp.Compare(a.node, b.node)
	})
	budgetHeld, boundHeld := 0, false
	for _, p := range slices.Concat(nodeless, empty, busy) {
		if int64(len(out.picks)+budgetHeld) == want {
			break
		}
		if left == 0 {
			boundHeld = true
			break
		}
		if p.node != "" {
			if allowed == 0 {
				budgetHeld++
				continue
			}
			allowed--
		}
		left--
		out.picks = append(out.picks, p)
	}
	if budgetHeld > 0 {
		out.held = append(out.held, fmt.Sprintf("the pool's disruption budgets allow no more now; %d nodes wait", budgetHeld))
	}
	if boundHeld {
		out.held = append(out.held, fmt.Sprintf("at most %d claims a run; the rest go in the next run", MaxStaticScaleDownPerRun))
	}
	if short := want - int64(len(out.picks)); short > 0 && budgetHeld == 0 && !boundHeld && protected > 0 {
		out.held = append(out.held, fmt.Sprintf("%d fewer than the surplus: the other nodes are protected or already going", short))
	}
	return out
}

// rung orders the claims without a Node: not launched first.
func rung(why string) int {
	if why == staticPickUnlaunched {
		return 0
	}
	return 1
}

// staticProtection says what keeps node n from a static scale-down at now ("" when nothing): the
// node's karpenter.sh/do-not-disrupt annotation or an active pod's.
func staticProtection(n *disruption.Node, now time.Time) string {
	if n.Node.Annotations[disruption.AnnotationDoNotDisrupt] == "true" {
		return fmt.Sprintf("the node has the %s annotation", disruption.AnnotationDoNotDisrupt)
	}
	for _, p := range n.Pods {
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if on, _, _ := disruption.DoNotDisrupt(p, now); on {
			return fmt.Sprintf("pod %s/%s has the %s annotation", p.Namespace, p.Name, disruption.AnnotationDoNotDisrupt)
		}
	}
	return ""
}

// lifetimeRemaining is Karpenter's LifetimeRemaining: the share of the claim's lifetime (launch to
// expiry) still ahead at now, in [0, 1]; 1 when it never expires.
func lifetimeRemaining(n *disruption.Node, now time.Time) float64 {
	if n.ExpiresAt.IsZero() || n.LaunchedAt.IsZero() || !n.ExpiresAt.After(n.LaunchedAt) {
		return 1
	}
	total := n.ExpiresAt.Sub(n.LaunchedAt)
	return min(max(float64(n.ExpiresAt.Sub(now))/float64(total), 0), 1)
}
