package reconcile

import (
	"sort"
	"strings"
	"time"
)

// Timeouts and grace periods.
const (
	LaunchTimeout       = 5 * time.Minute
	RegistrationTimeout = 15 * time.Minute
	// LeakGrace (Karpenter's) keeps a brand-new instance from looking orphaned while its claim write is
	// still settling: an own instance without a claim is adopted only after it.
	LeakGrace = 30 * time.Second
	// ClaimGCGrace keeps a freshly launched claim from looking launched-without-instance. The instance
	// list is read before the claims, so a claim that turned launched in between names an instance the
	// list does not hold; and DescribeInstances is eventually consistent, so a new instance may stay out
	// of lists for a while after CreateFleet returned it. Two minutes is four times Karpenter's leak grace
	// and longer than a provisioner run (60 s), so neither a pass nor a lagging list can outrun it; a claim
	// whose instance is really gone waits two minutes longer to be forgotten, which costs nothing.
	ClaimGCGrace = 2 * time.Minute
	// BatchAdoptGrace keeps a batch's pending claims from being paired with its untagged instances while
	// the run that launched them may still be tagging and recording them: that run pairs them its own
	// way, and a pass pairing them another way would give one instance two claims and leave another with
	// none. It is longer than a provisioner run (60 s), so only a batch whose run died is paired here.
	BatchAdoptGrace = 90 * time.Second
	// NodeLostGrace is how long the Node of a registered claim may stay gone while its instance runs
	// before the claim is handed to the termination flow: a Node deleted with Nodewright's finalizer
	// stripped (by an operator, or in the moment a cut-off registration had not put it on yet) leaves an
	// instance nothing drains or terminates. The grace lets a kubelet that is restarted register its Node
	// again, and lets one pass's view be confirmed by a later one: the first pass that misses the Node
	// only notes it (NoteNodeLost), and the hand-over needs a Node missing at both ends of the grace.
	NodeLostGrace = 2 * time.Minute
)

// ClaimState is a claim's lifecycle as far as reconciliation cares.
type ClaimState string

const (
	Pending    ClaimState = "pending"
	Launched   ClaimState = "launched"
	Registered ClaimState = "registered" // registered or initialized
	Draining   ClaimState = "draining"   // draining or terminating: the termination path owns it
	// Deleted claims stand for nothing; their records only keep their names taken.
	Deleted ClaimState = "deleted"
)

// Claim is a claim record.
type Claim struct {
	Name       string
	State      ClaimState
	InstanceID string
	NodeName   string
	CreatedAt  time.Time
	LaunchedAt time.Time
	// Batch is the id of the batched launch the claim went with, if any.
	Batch string
	// NodeLostAt is when a pass first found the registered claim's Node gone while its instance runs
	// (zero: its Node was there, as far as any pass saw).
	NodeLostAt time.Time
}

// Instance is a live EC2 instance tagged nodewright.sh/cluster=<cluster>: Nodewright's own. Instances
// without that tag (Karpenter's, a managed node group's) are never in the input.
type Instance struct {
	ID         string
	Claim      string // its nodewright.sh/nodeclaim tag
	LaunchTime time.Time
	// Batch is its nodewright.sh/launch-batch tag: the token of the batched CreateFleet that launched it,
	// whose claims are paired with its instances afterwards (BatchOf tells the batch id).
	Batch string
}

// Node is a Kubernetes Node with an EC2 providerID.
type Node struct {
	Name       string
	InstanceID string // from spec.providerID
	Ready      bool
}

// Input is one snapshot of all three sides. Each Complete flag says that list was read whole.
type Input struct {
	Now                                              time.Time
	Claims                                           []Claim
	Instances                                        []Instance
	Nodes                                            []Node
	ClaimsComplete, InstancesComplete, NodesComplete bool
}

// Kind of repair.
type Kind string

const (
	AdoptInstance Kind = "AdoptInstance" // record Instance on the pending Claim and mark it launched
	// RebuildClaim writes a new claim for an own Instance no claim stands for (a redeploy with an empty
	// table, a lost record), named Claim, with Node as its Node when one runs on the instance.
	RebuildClaim Kind = "RebuildClaim"
	DeleteClaim  Kind = "DeleteClaim" // remove the claim record
	// Terminate hands Claim to the termination flow (drain, terminate, delete the Node after the instance
	// is gone); the lifecycle itself never terminates an instance nor deletes a Node.
	Terminate Kind = "Terminate"
	// NoteNodeLost records Now as the registered Claim's NodeLostAt: its Node is gone, its instance runs.
	NoteNodeLost Kind = "NoteNodeLost"
	// ClearNodeLost clears Claim's NodeLostAt: its Node is back (a kubelet registered it again).
	ClearNodeLost Kind = "ClearNodeLost"
)

// Action is one repair.
type Action struct {
	Kind     Kind
	Claim    string
	Instance string
	Node     string
	Reason   string
	// ConfirmGone says the action rests on Instance being gone from the list: carry it out only after
	// asking EC2 for that instance by id and finding it gone.
	ConfirmGone bool
}

// Result is what to repair, or why nothing is decided.
type Result struct {
	Actions []Action
	// Skipped is set when an input was incomplete and nothing was decided.
	Skipped string
}

// Reasons of the actions, before the colon: the decision record's reason.
const (
	reasonAdopted      = "the instance was launched but the claim was not updated (interrupted launch)"
	reasonAdoptedBatch = "the instance was launched by the claim's batch but the claim was not updated (interrupted batched launch)"
	reasonLaunch       = "launch_timeout: not launched within 5m"
	reasonRegistration = "registration_timeout: no Node registered within 15m"
	reasonGone         = "garbage_collected: the instance is gone"
	reasonGhostNode    = "garbage_collected: the instance is gone and its Node is not Ready"
	reasonOrphan       = "orphan: an own instance no claim stands for; its claim is rebuilt from its tags"
	reasonNodeMissing  = "node_lost: the claim's Node is gone while its instance runs"
	reasonNodeLost     = "node_lost: the claim's Node has been gone for 2m while its instance runs (deleted without Nodewright's finalizer)"
	reasonNodeBack     = "node_lost: the claim's Node is back"
)

// Decide returns the repairs for in, in a deterministic order.
func Decide(in Input) Result {
	if !in.ClaimsComplete || !in.InstancesComplete || !in.NodesComplete {
		return Result{Skipped: "an input list is incomplete; nothing is decided on partial data"}
	}
	instByID := map[string]Instance{}
	instByClaim := map[string]Instance{}
	for _, i := range in.Instances {
		instByID[i.ID] = i
		if i.Claim != "" {
			instByClaim[i.Claim] = i
		}
	}
	nodeByInstance := map[string]Node{}
	for _, n := range in.Nodes {
		nodeByInstance[n.InstanceID] = n
	}
	var out []Action
	owned := map[string]bool{} // instances a claim stands for
	names := map[string]bool{} // claim names taken, deleted records included
	for _, c := range in.Claims {
		if c.State == Launched || c.State == Registered || c.State == Draining {
			owned[c.InstanceID] = true
		}
	}
	untagged := batchInstances(in.Instances, owned)
	pendingBatch := map[string]bool{} // batches with pending claims, whose instances are theirs to adopt
	for _, c := range in.Claims {
		if c.State == Pending && c.Batch != "" {
			pendingBatch[c.Batch] = true
		}
	}
	for _, c := range in.Claims {
		names[c.Name] = true
		switch c.State {
		case Pending:
			if i, ok := instByClaim[c.Name]; ok {
				owned[i.ID] = true
				out = append(out, Action{Kind: AdoptInstance, Claim: c.Name, Instance: i.ID, Reason: reasonAdopted})
				continue
			}
			if free := untagged[c.Batch]; c.Batch != "" && len(free) > 0 && in.Now.Sub(c.CreatedAt) >= BatchAdoptGrace {
				untagged[c.Batch] = free[1:]
				owned[free[0].ID] = true
				out = append(out, Action{Kind: AdoptInstance, Claim: c.Name, Instance: free[0].ID, Reason: reasonAdoptedBatch})
				continue
			}
			if in.Now.Sub(c.CreatedAt) >= LaunchTimeout {
				out = append(out, Action{Kind: DeleteClaim, Claim: c.Name, Reason: reasonLaunch})
			}
		case Launched, Registered:
			owned[c.InstanceID] = true
			out = append(out, decideLive(in.Now, c, instByID, nodeByInstance)...)
		case Draining:
			owned[c.InstanceID] = true
		}
	}
	for _, i := range in.Instances {
		if owned[i.ID] || in.Now.Sub(i.LaunchTime) < LeakGrace || pendingBatch[BatchOf(i.Batch)] && i.Claim == "" {
			continue
		}
		out = append(out, orphan(in.Now, i, names, nodeByInstance)...)
	}
	// Adopt and rebuild before anything is handed over (a handed-over claim must exist), forget last.
	rank := map[Kind]int{AdoptInstance: 0, RebuildClaim: 0, NoteNodeLost: 0, ClearNodeLost: 0, Terminate: 1, DeleteClaim: 2}
	sort.SliceStable(out, func(a, b int) bool {
		if out[a].Kind != out[b].Kind {
			return rank[out[a].Kind] < rank[out[b].Kind]
		}
		return out[a].Claim+out[a].Instance+out[a].Node < out[b].Claim+out[b].Instance+out[b].Node
	})
	return Result{Actions: out}
}

// decideLive is the repair of a launched or registered claim, if it needs one. Nothing rests on a missing
// instance within ClaimGCGrace of the launch, and what does is confirmed by id first.
func decideLive(now time.Time, c Claim, instByID map[string]Instance, nodeByInstance map[string]Node) []Action {
	_, running := instByID[c.InstanceID]
	n, hasNode := nodeByInstance[c.InstanceID]
	launched := c.LaunchedAt
	if launched.IsZero() {
		launched = c.CreatedAt
	}
	switch {
	case running && !hasNode && c.State == Launched && now.Sub(launched) >= RegistrationTimeout:
		return []Action{{Kind: Terminate, Claim: c.Name, Instance: c.InstanceID, Reason: reasonRegistration}}
	case running && c.State == Registered:
		return nodeLost(now, c, hasNode)
	case running || now.Sub(launched) < ClaimGCGrace:
		return nil
	case hasNode && n.Ready:
		return nil // the instance list lags; a Ready Node says the instance is alive
	case hasNode:
		// A ghost Node: the termination flow deletes it once the instance is confirmed gone.
		return []Action{{Kind: Terminate, Claim: c.Name, Instance: c.InstanceID, Node: n.Name, Reason: reasonGhostNode, ConfirmGone: true}}
	}
	return []Action{{Kind: DeleteClaim, Claim: c.Name, Instance: c.InstanceID, Reason: reasonGone, ConfirmGone: true}}
}

// nodeLost is the repair of a registered claim whose instance runs: none while its Node is there; when
// the Node is gone, first a note of when that was seen, and once it has stayed gone for NodeLostGrace a
// hand-over to the termination flow, which terminates the instance (nothing is left to drain) and
// deletes the claim. A Node that comes back clears the note.
func nodeLost(now time.Time, c Claim, hasNode bool) []Action {
	switch {
	case hasNode && c.NodeLostAt.IsZero():
		return nil
	case hasNode:
		return []Action{{Kind: ClearNodeLost, Claim: c.Name, Instance: c.InstanceID, Node: c.NodeName, Reason: reasonNodeBack}}
	case c.NodeLostAt.IsZero():
		return []Action{{Kind: NoteNodeLost, Claim: c.Name, Instance: c.InstanceID, Node: c.NodeName, Reason: reasonNodeMissing}}
	case now.Sub(c.NodeLostAt) >= NodeLostGrace:
		return []Action{{Kind: Terminate, Claim: c.Name, Instance: c.InstanceID, Node: c.NodeName, Reason: reasonNodeLost}}
	}
	return nil
}

// orphan rebuilds the claim of an own instance no claim stands for, named by its nodewright.sh/nodeclaim
// tag unless that name is taken (a deleted record), and hands it over when it has had a registration
// timeout's time to bring up a Node and has none. It is never terminated directly.
func orphan(now time.Time, i Instance, names map[string]bool, nodeByInstance map[string]Node) []Action {
	name := i.Claim
	if name == "" || names[name] {
		name = "adopted-" + i.ID
	}
	names[name] = true
	n, hasNode := nodeByInstance[i.ID]
	out := []Action{{Kind: RebuildClaim, Claim: name, Instance: i.ID, Node: n.Name, Reason: reasonOrphan}}
	if !hasNode && now.Sub(i.LaunchTime) >= RegistrationTimeout {
		out = append(out, Action{Kind: Terminate, Claim: name, Instance: i.ID, Reason: reasonRegistration})
	}
	return out
}

// batchInstances are, per batch id, the instances a batched launch started that carry no claim tag and
// that no claim stands for, in id order: the claims of an interrupted batch adopt them in their order.
func batchInstances(instances []Instance, owned map[string]bool) map[string][]Instance {
	out := map[string][]Instance{}
	for _, i := range instances {
		if i.Batch != "" && i.Claim == "" && !owned[i.ID] {
			b := BatchOf(i.Batch)
			out[b] = append(out[b], i)
		}
	}
	for _, list := range out {
		sort.Slice(list, func(a, b int) bool { return list[a].ID < list[b].ID })
	}
	return out
}

// BatchOf is the batch id of a batch tag: the tag of a fallback attempt is the batch id and "-<attempt>"
// (a batch id is "batch-" and characters without a dash).
func BatchOf(tag string) string {
	if rest, ok := strings.CutPrefix(tag, "batch-"); ok {
		if i := strings.IndexByte(rest, '-'); i >= 0 {
			return tag[:len("batch-")+i]
		}
	}
	return tag
}
