package interruption

import (
	"encoding/json"

	"github.com/nodewright/nodewright/shared/flows/interruption/messages"
	"github.com/nodewright/nodewright/shared/flows/interruption/messages/capacityreservation"
	"github.com/nodewright/nodewright/shared/flows/interruption/messages/rebalance"
	"github.com/nodewright/nodewright/shared/flows/interruption/messages/scheduledchange"
	"github.com/nodewright/nodewright/shared/flows/interruption/messages/spotinterruption"
	"github.com/nodewright/nodewright/shared/flows/interruption/messages/statechange"
)

// detailParser reads the detail of one kind of event.
type detailParser func(messages.Envelope, json.RawMessage) (messages.Message, error)

// parsers is keyed by Route; every parser reads envelope version messages.SupportedVersion.
var parsers = map[Route]detailParser{
	{spotinterruption.Source, spotinterruption.DetailType}:       spotinterruption.Parse,
	{rebalance.Source, rebalance.DetailType}:                     rebalance.Parse,
	{statechange.Source, statechange.DetailType}:                 statechange.Parse,
	{scheduledchange.Source, scheduledchange.DetailType}:         scheduledchange.Parse,
	{capacityreservation.Source, capacityreservation.DetailType}: capacityreservation.Parse,
}

// Parse reads one SQS message body, an EventBridge event, into the message of its kind. It never
// panics. Errors are a *messages.MalformedError (the body or a field the kind needs is unreadable) or
// a *messages.UnknownKindError (no parser for the source, detail-type and version); both are final for
// the body. States and health events that ask for nothing parse into a messages.NoOp.
func Parse(body []byte) (messages.Message, error) {
	env, detail, err := messages.DecodeEnvelope(body)
	if err != nil {
		return nil, err
	}
	parse, ok := parsers[Route{env.Source, env.DetailType}]
	if !ok || env.Version != messages.SupportedVersion {
		return nil, messages.UnknownKind(env)
	}
	return parse(env, detail)
}

// Route is an EventBridge source and detail-type pair Parse understands.
type Route struct {
	Source, DetailType string
}

// Routes lists the pairs Parse understands, for the EventBridge rules that feed the interruption queue
// and for tests that keep the two in step.
func Routes() []Route {
	return []Route{
		{spotinterruption.Source, spotinterruption.DetailType},
		{rebalance.Source, rebalance.DetailType},
		{statechange.Source, statechange.DetailType},
		{scheduledchange.Source, scheduledchange.DetailType},
		{capacityreservation.Source, capacityreservation.DetailType},
	}
}
