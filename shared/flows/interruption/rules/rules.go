// Package rules names the EventBridge rules that feed the interruption queue: one per event kind the
// interruption function parses, each with the detail filter that keeps unrelated events of its kind off
// the queue. The CDK app deploys them and the local sandbox creates them in moto, from this one list.
package rules

import (
	"github.com/nodewright/nodewright/shared/flows/interruption/messages/capacityreservation"
	"github.com/nodewright/nodewright/shared/flows/interruption/messages/rebalance"
	"github.com/nodewright/nodewright/shared/flows/interruption/messages/scheduledchange"
	"github.com/nodewright/nodewright/shared/flows/interruption/messages/spotinterruption"
	"github.com/nodewright/nodewright/shared/flows/interruption/messages/statechange"
)

// Rule is one EventBridge rule.
type Rule struct {
	ID, Description    string
	Source, DetailType string
	// Detail is the pattern's detail filter (nil: none).
	Detail map[string]any
}

// Pattern is the rule's EventBridge event pattern.
func (r Rule) Pattern() map[string]any {
	p := map[string]any{"source": []string{r.Source}, "detail-type": []string{r.DetailType}}
	if r.Detail != nil {
		p["detail"] = r.Detail
	}
	return p
}

// Interruption are the rules in front of the interruption queue.
var Interruption = []Rule{
	{ID: "SpotInterruption", Description: "EC2 Spot two-minute interruption warnings",
		Source: spotinterruption.Source, DetailType: spotinterruption.DetailType},
	{ID: "Rebalance", Description: "EC2 instance rebalance recommendations",
		Source: rebalance.Source, DetailType: rebalance.DetailType},
	{ID: "StateChange", Description: "EC2 instances stopping or terminating",
		Source: statechange.Source, DetailType: statechange.DetailType,
		Detail: map[string]any{"state": []string{
			statechange.StateStopping, statechange.StateStopped, statechange.StateShuttingDown, statechange.StateTerminated}}},
	{ID: "ScheduledChange", Description: "AWS Health scheduled changes to EC2 instances",
		Source: scheduledchange.Source, DetailType: scheduledchange.DetailType,
		Detail: map[string]any{"service": []string{scheduledchange.ServiceEC2}, "eventTypeCategory": []string{scheduledchange.CategoryScheduledChange}}},
	{ID: "CapacityReservationInterruption", Description: "EC2 capacity reservation instance interruption warnings",
		Source: capacityreservation.Source, DetailType: capacityreservation.DetailType},
}
