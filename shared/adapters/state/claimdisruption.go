package state

import "time"

// DriftCondition is a claim's Drifted condition, as Karpenter puts it on the NodeClaim: the first kind
// that drifted (drift.Reason: NodePoolDrifted, AMIDrift...), what drifted (old and new hash, AMI,
// subnet...), and since when. The disruption run sets it when drift detection finds the claim drifted
// and clears it when a later detection finds it is not; a detection that could not decide (a failed
// resolution) leaves it as it is.
type DriftCondition struct {
	Reason  string            `dynamodbav:"reason" json:"reason"`
	Details map[string]string `dynamodbav:"details,omitempty" json:"details,omitempty"`
	Since   time.Time         `dynamodbav:"since" json:"since"`
}

// DisruptionRequest is a request to disrupt a claim: an operator's (`nodewright disrupt`, or a DELETE of
// the claim's NodeClaim mirror: the equivalent of `kubectl delete nodeclaim`), or node repair's (Unhealthy set). The disruption run launches replacement
// capacity for its pods first, then drains the node (a repaired node's drain is forced, as Karpenter's
// repair forces it). Budgets and do-not-disrupt do not hold it back.
type DisruptionRequest struct {
	// Reason is the operator's text ("" when none was given), or what node repair found.
	Reason      string    `dynamodbav:"reason,omitempty" json:"reason,omitempty"`
	RequestedAt time.Time `dynamodbav:"requestedAt" json:"requestedAt"`
	// By names who asked (the CLI's caller identity when known; RepairRequester for node repair).
	By string `dynamodbav:"by,omitempty" json:"by,omitempty"`
	// Unhealthy is set when node repair (the NodeRepair feature gate) asked: the condition that held past
	// its toleration. The disruption run then disrupts the claim for the reason Unhealthy.
	Unhealthy *UnhealthyCondition `dynamodbav:"unhealthy,omitempty" json:"unhealthy,omitempty"`
}

// RepairRequester is DisruptionRequest.By when node repair asked.
const RepairRequester = "nodewright node repair"

// MirrorDeletionRequester is DisruptionRequest.By when someone deleted the claim's NodeClaim mirror
// (`kubectl delete nodeclaims.nodewright.sh NAME`), the equivalent of Karpenter's `kubectl delete
// nodeclaim`. The API server does not tell the mirror writer who deleted it; its audit log does.
const MirrorDeletionRequester = "kubectl delete nodeclaims.nodewright.sh"

// UnhealthyCondition is what node repair found wrong with a claim's node: a Node condition in an
// unhealthy status (Type Ready, Status False or Unknown; AcceleratedHardwareReady False...) or a failed
// EC2 status check (Type InstanceStatus or SystemStatus, Status impaired), since when, and how long it is
// tolerated before the node is replaced.
type UnhealthyCondition struct {
	Type       string        `dynamodbav:"type" json:"type"`
	Status     string        `dynamodbav:"status" json:"status"`
	Since      time.Time     `dynamodbav:"since" json:"since"`
	Toleration time.Duration `dynamodbav:"toleration" json:"toleration"`
}

// DisruptingMark says a disruption command has taken the claim as a candidate and tainted its Node
// karpenter.sh/disrupted:NoSchedule while the command's replacements launch (Karpenter sets the
// NodeClaim's DisruptionReason condition at that point). The disruption run sets it when the command
// starts and clears it when the command is rolled back or no longer in progress; once the termination
// flow drains the claim, DisruptionReason and the lifecycle say the rest. NodeClaim mirrors show it.
type DisruptingMark struct {
	// Command is the disruption command's id; Reason its reason (Underutilized, Empty, Drifted,
	// Expired...).
	Command string    `dynamodbav:"command" json:"command"`
	Reason  string    `dynamodbav:"reason" json:"reason"`
	Since   time.Time `dynamodbav:"since" json:"since"`
	// Replacements are the claims launched to replace it (none for a delete).
	Replacements []string `dynamodbav:"replacements,omitempty" json:"replacements,omitempty"`
}

// ConsolidatableMark says the claim's node has had no pod event for its NodePool's consolidateAfter
// since it initialized (Karpenter's Consolidatable condition on the NodeClaim). The disruption run,
// which dates the nodes' pod events, sets it when it first sees consolidateAfter passed and clears it
// when a pod event, a consolidateAfter of Never or an uninitialized node takes it away; it writes on
// change only. NodeClaim mirrors show it.
type ConsolidatableMark struct {
	// Since is when the run that set the mark found consolidateAfter passed (the condition's
	// lastTransitionTime).
	Since time.Time `dynamodbav:"since" json:"since"`
}
