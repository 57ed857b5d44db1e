package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/nodewright/nodewright/shared/interruption/messages/capacityreservation"
	"github.com/nodewright/nodewright/shared/interruption/messages/rebalance"
	"github.com/nodewright/nodewright/shared/interruption/messages/scheduledchange"
	"github.com/nodewright/nodewright/shared/interruption/messages/spotinterruption"
	"github.com/nodewright/nodewright/shared/interruption/messages/statechange"
)

// interruptionRule is one EventBridge rule feeding the interruption queue.
type interruptionRule struct {
	id, description, source, detailType string
	detail                              map[string]interface{}
}

// interruptionRules are the events the interruption function parses (interruption.Routes), each with
// the detail filter that keeps unrelated events of its kind off the queue.
var interruptionRules = []interruptionRule{
	{id: "SpotInterruption", description: "EC2 Spot two-minute interruption warnings",
		source: spotinterruption.Source, detailType: spotinterruption.DetailType},
	{id: "Rebalance", description: "EC2 instance rebalance recommendations",
		source: rebalance.Source, detailType: rebalance.DetailType},
	{id: "StateChange", description: "EC2 instances stopping or terminating",
		source: statechange.Source, detailType: statechange.DetailType,
		detail: map[string]interface{}{"state": []string{
			statechange.StateStopping, statechange.StateStopped, statechange.StateShuttingDown, statechange.StateTerminated}}},
	{id: "ScheduledChange", description: "AWS Health scheduled changes to EC2 instances",
		source: scheduledchange.Source, detailType: scheduledchange.DetailType,
		detail: map[string]interface{}{"service": []string{"EC2"}, "eventTypeCategory": []string{scheduledchange.CategoryScheduledChange}}},
	{id: "CapacityReservationInterruption", description: "EC2 capacity reservation instance interruption warnings",
		source: capacityreservation.Source, detailType: capacityreservation.DetailType},
}

// newInterruptionRules routes every interruption event of the account and region to queue. The queue's
// policy lets EventBridge send only on behalf of these rules (aws:SourceArn).
func newInterruptionRules(scope constructs.Construct, queue awssqs.IQueue) []awsevents.Rule {
	c := constructs.NewConstruct(scope, jsii.String("Rules"))
	rules := make([]awsevents.Rule, 0, len(interruptionRules))
	for _, r := range interruptionRules {
		pattern := &awsevents.EventPattern{Source: jsii.Strings(r.source), DetailType: jsii.Strings(r.detailType)}
		if r.detail != nil {
			detail := r.detail
			pattern.Detail = &detail
		}
		rules = append(rules, awsevents.NewRule(c, jsii.String(r.id), &awsevents.RuleProps{
			Description:  jsii.String("Nodewright: " + r.description),
			EventPattern: pattern,
			Targets:      &[]awsevents.IRuleTarget{awseventstargets.NewSqsQueue(queue, nil)},
		}))
	}
	return rules
}
