package rebalance

import "github.com/nodewright/nodewright/shared/flows/interruption/messages"

// Detail is the event's detail object.
type Detail struct {
	InstanceID string `json:"instance-id"`
}

// Message is a parsed rebalance recommendation.
type Message struct {
	messages.Envelope
	Detail Detail `json:"detail"`
}

var _ messages.Message = Message{}

// Kind is RebalanceRecommendationKind.
func (Message) Kind() messages.Kind { return messages.RebalanceRecommendationKind }

// InstanceIDs returns the one instance at risk.
func (m Message) InstanceIDs() []string { return []string{m.Detail.InstanceID} }
