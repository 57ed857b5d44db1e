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

// DisruptionRequest is an operator's request to disrupt a claim (`nodewright disrupt`), the equivalent of
// `kubectl delete nodeclaim`: the disruption run launches replacement capacity for its pods first, then
// drains the node gracefully. Budgets and do-not-disrupt do not hold it back.
type DisruptionRequest struct {
	// Reason is the operator's text ("" when none was given).
	Reason      string    `dynamodbav:"reason,omitempty" json:"reason,omitempty"`
	RequestedAt time.Time `dynamodbav:"requestedAt" json:"requestedAt"`
	// By names who asked (the CLI's caller identity when known).
	By string `dynamodbav:"by,omitempty" json:"by,omitempty"`
}
