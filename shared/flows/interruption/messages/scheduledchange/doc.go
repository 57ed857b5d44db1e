// Package scheduledchange models and parses the aws.health "AWS Health Event" for EC2 scheduled changes
// (instance retirement, system maintenance): the instances in detail.affectedEntities will be stopped,
// rebooted or retired during the window from detail.startTime to detail.endTime.
//
// Health events for other services or other categories, closed events, and events that name no
// instance give a messages.NoOp. Health writes its times as RFC 1123 ("Mon, 23 Nov 2026 08:00:00 GMT");
// RFC 3339 is accepted too.
//
// Ring: pure core (standard library and messages only).
package scheduledchange
