package interruption

import (
	"fmt"

	"github.com/aws/aws-lambda-go/events"

	"github.com/nodewright/nodewright/shared/flows/interruption/messages"
)

// Result is the outcome of parsing one record of an SQS batch: a Message or an Err, never both.
type Result struct {
	// MessageID is the SQS message id, what a partial batch failure reports.
	MessageID string
	Message   messages.Message
	// Err wraps a *messages.MalformedError or *messages.UnknownKindError and names the SQS message.
	Err error
}

// ParseSQSEvent parses every record of a Lambda SQS batch, one Result per record, in order. Duplicates
// (the same event id in two records) are parsed twice; deduplication is the handler's job.
func ParseSQSEvent(event events.SQSEvent) []Result {
	results := make([]Result, 0, len(event.Records))
	for _, record := range event.Records {
		r := Result{MessageID: record.MessageId}
		msg, err := Parse([]byte(record.Body))
		if err != nil {
			r.Err = fmt.Errorf("parsing SQS message %s: %w", record.MessageId, err)
		} else {
			r.Message = msg
		}
		results = append(results, r)
	}
	return results
}
