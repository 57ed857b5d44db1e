package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/nodewright/nodewright/shared/interruption/rules"
)

// newInterruptionRules routes every interruption event of the account and region to queue, one rule per
// event kind the interruption function parses (rules.Interruption). The queue's policy lets EventBridge
// send only on behalf of these rules (aws:SourceArn).
func newInterruptionRules(scope constructs.Construct, queue awssqs.IQueue) []awsevents.Rule {
	c := constructs.NewConstruct(scope, jsii.String("Rules"))
	out := make([]awsevents.Rule, 0, len(rules.Interruption))
	for _, r := range rules.Interruption {
		pattern := &awsevents.EventPattern{Source: jsii.Strings(r.Source), DetailType: jsii.Strings(r.DetailType)}
		if r.Detail != nil {
			detail := map[string]interface{}(r.Detail)
			pattern.Detail = &detail
		}
		out = append(out, awsevents.NewRule(c, jsii.String(r.ID), &awsevents.RuleProps{
			Description:  jsii.String("Nodewright: " + r.Description),
			EventPattern: pattern,
			Targets:      &[]awsevents.IRuleTarget{awseventstargets.NewSqsQueue(queue, nil)},
		}))
	}
	return out
}
