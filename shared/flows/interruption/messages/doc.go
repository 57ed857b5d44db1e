// Package messages holds what every interruption message kind shares: the EventBridge envelope, the
// Message interface, the kinds, the NoOp message and the typed parse errors.
//
// Ring: pure core (standard library only). One sub-package per EventBridge message kind holds that
// kind's model and parser: spotinterruption, rebalance, statechange, scheduledchange and
// capacityreservation. The dispatcher that picks a sub-package by source and detail-type is
// interruption.Parse, one level up.
//
// Parsers are strict about what a handler acts on (the event id, the event time and the instance ids)
// and lenient about the rest: an unexpected instance-action or an unknown tag never drops an event,
// because a dropped spot warning means a node dies undrained.
package messages
