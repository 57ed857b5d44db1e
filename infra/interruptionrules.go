package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/nodewright/nodewright/shared/flows/interruption/rules"
)

// undeliveredEventAge is how long EventBridge keeps retrying an event it could not put on the queue
// before handing it to the dead-letter queue. Its own default is 24 hours and then the event is dropped;
// an interruption notice is worth little after its two minutes, but a state change still tells the
// lifecycle what to clean up, and the dead-letter queue's alarm tells the operator.
const undeliveredEventAgeMinutes = 60

// newInterruptionRules routes every interruption event of the account and region to queue, one rule per
// event kind the interruption function parses (rules.Interruption). The queue's policy lets EventBridge
// send only on behalf of these rules (aws:SourceArn). An event EventBridge cannot deliver goes to
// deadLetter, never nowhere.
func newInterruptionRules(scope constructs.Construct, queue, deadLetter awssqs.IQueue) []awsevents.Rule {
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
			Targets: &[]awsevents.IRuleTarget{awseventstargets.NewSqsQueue(queue, &awseventstargets.SqsQueueProps{
				DeadLetterQueue: deadLetter,
				MaxEventAge:     awscdk.Duration_Minutes(jsii.Number(undeliveredEventAgeMinutes)),
				RetryAttempts:   jsii.Number(185),
			})},
		}))
	}
	return out
}
