package reconcile

import (
	"sort"
	"time"
)

// Timeouts and grace periods (Karpenter's).
const (
	LaunchTimeout       = 5 * time.Minute
	RegistrationTimeout = 15 * time.Minute
	// LeakGrace keeps a brand-new instance from looking orphaned while its claim write is still settling.
	LeakGrace = 30 * time.Second
)

// ClaimState is a claim's lifecycle as far as reconciliation cares.
type ClaimState string

const (
	Pending    ClaimState = "pending"
	Launched   ClaimState = "launched"
	Registered ClaimState = "registered" // registered or initialized
	Draining   ClaimState = "draining"   // draining or terminating: the termination path owns it
)

// Claim is a live claim record.
type Claim struct {
	Name       string
	State      ClaimState
	InstanceID string
	NodeName   string
	CreatedAt  time.Time
	LaunchedAt time.Time
}

// Instance is an EC2 instance tagged for the cluster, in a live state.
type Instance struct {
	ID         string
	Claim      string // its karpenter.sh/nodeclaim tag
	LaunchTime time.Time
}

// Node is a Kubernetes Node Nodewright launched (it carries karpenter.sh/nodepool).
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
	AdoptInstance     Kind = "AdoptInstance"     // record Instance on Claim and mark it launched
	DeleteClaim       Kind = "DeleteClaim"       // remove the claim record
	TerminateInstance Kind = "TerminateInstance" // terminate Instance
	DeleteNode        Kind = "DeleteNode"        // delete Node
)

// Action is one repair.
type Action struct {
	Kind     Kind
	Claim    string
	Instance string
	Node     string
	Reason   string
}

// Result is what to repair, or why nothing is decided.
type Result struct {
	Actions []Action
	// Skipped is set when an input was incomplete and nothing was decided.
	Skipped string
}

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
	for _, c := range in.Claims {
		switch c.State {
		case Pending:
			if i, ok := instByClaim[c.Name]; ok {
				owned[i.ID] = true
				out = append(out, Action{Kind: AdoptInstance, Claim: c.Name, Instance: i.ID,
					Reason: "the instance was launched but the claim was not updated (interrupted launch)"})
				continue
			}
			if in.Now.Sub(c.CreatedAt) >= LaunchTimeout {
				out = append(out, Action{Kind: DeleteClaim, Claim: c.Name, Reason: "launch_timeout: not launched within 5m"})
			}
		case Launched:
			owned[c.InstanceID] = true
			_, running := instByID[c.InstanceID]
			_, hasNode := nodeByInstance[c.InstanceID]
			switch {
			case !running && !hasNode:
				out = append(out, Action{Kind: DeleteClaim, Claim: c.Name, Instance: c.InstanceID, Reason: "garbage_collected: the instance is gone"})
			case !hasNode && in.Now.Sub(c.LaunchedAt) >= RegistrationTimeout:
				out = append(out,
					Action{Kind: TerminateInstance, Claim: c.Name, Instance: c.InstanceID, Reason: "registration_timeout: no Node registered within 15m"},
					Action{Kind: DeleteClaim, Claim: c.Name, Instance: c.InstanceID, Reason: "registration_timeout: no Node registered within 15m"})
			}
		case Registered:
			owned[c.InstanceID] = true
			if _, running := instByID[c.InstanceID]; !running {
				n, hasNode := nodeByInstance[c.InstanceID]
				if hasNode && n.Ready {
					continue // the instance list lags; a Ready Node says it is alive
				}
				out = append(out, Action{Kind: DeleteClaim, Claim: c.Name, Instance: c.InstanceID, Reason: "garbage_collected: the instance is gone and its Node is not Ready"})
			}
		case Draining:
			owned[c.InstanceID] = true
		}
	}
	for _, i := range in.Instances {
		if owned[i.ID] || in.Now.Sub(i.LaunchTime) < LeakGrace {
			continue
		}
		out = append(out, Action{Kind: TerminateInstance, Instance: i.ID, Claim: i.Claim, Reason: "leaked: no live claim stands for this instance"})
	}
	for _, n := range in.Nodes {
		if _, running := instByID[n.InstanceID]; running {
			continue
		}
		out = append(out, Action{Kind: DeleteNode, Node: n.Name, Instance: n.InstanceID, Reason: "ghost node: its instance is gone"})
	}
	// Terminate before forgetting: a crash between two repairs leaves an instance that the next round
	// recognises (as leaked), never one nobody knows about.
	rank := map[Kind]int{AdoptInstance: 0, TerminateInstance: 1, DeleteNode: 2, DeleteClaim: 3}
	sort.SliceStable(out, func(a, b int) bool {
		if out[a].Kind != out[b].Kind {
			return rank[out[a].Kind] < rank[out[b].Kind]
		}
		return out[a].Claim+out[a].Instance+out[a].Node < out[b].Claim+out[b].Instance+out[b].Node
	})
	return Result{Actions: out}
}
