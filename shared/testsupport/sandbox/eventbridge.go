package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/nodewright/nodewright/shared/flows/interruption/rules"
)

// routeInterruptions creates the CDK app's interruption rules (rules.Interruption) on moto's default event
// bus, each targeting the interruption queue.
func (s *Sandbox) routeInterruptions(ctx context.Context) error {
	attrs, err := s.SQS.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(s.Queues.Interruption),
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		return err
	}
	arn := attrs.Attributes[string(sqstypes.QueueAttributeNameQueueArn)]
	eb := eventbridge.NewFromConfig(s.AWS)
	for _, r := range rules.Interruption {
		name := r.ID
		body, err := json.Marshal(r.Pattern())
		if err != nil {
			return err
		}
		if _, err := eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String(Cluster + "-" + name), EventPattern: aws.String(string(body))}); err != nil {
			return fmt.Errorf("creating rule %s: %w", name, err)
		}
		if _, err := eb.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: aws.String(Cluster + "-" + name),
			Targets: []ebtypes.Target{{Id: aws.String("interruption-queue"), Arn: aws.String(arn)}}}); err != nil {
			return fmt.Errorf("targeting rule %s: %w", name, err)
		}
	}
	return nil
}

// PutEvent publishes one event as an AWS service would, through EventBridge's default bus.
func (s *Sandbox) PutEvent(ctx context.Context, source, detailType string, resources []string, detail any) error {
	body, err := json.Marshal(detail)
	if err != nil {
		return err
	}
	out, err := eventbridge.NewFromConfig(s.AWS).PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{{
		Source: aws.String(source), DetailType: aws.String(detailType), Detail: aws.String(string(body)),
		Resources: resources, Time: aws.Time(time.Now())}}})
	if err != nil {
		return err
	}
	if out.FailedEntryCount > 0 {
		return fmt.Errorf("EventBridge refused the event: %s", aws.ToString(out.Entries[0].ErrorMessage))
	}
	return nil
}
