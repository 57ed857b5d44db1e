package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
)

// Watched is what the dashboard and the alarms look at: the cluster whose EMF metrics they read, and
// the functions and queues whose AWS metrics they read.
type Watched struct {
	ClusterName string
	// Functions are the webhook and the worker functions, in the order an operator reads them.
	Functions []NamedFunction
	Queues    *Queues
}

// NamedFunction is a function with the short name graphs and alarms call it by.
type NamedFunction struct {
	Name     string
	Function awslambda.IFunction
}

// namedQueue is a work queue with its dead-letter queue and the name Queues.DeadLetter keys it by.
type namedQueue struct {
	Name             string
	Work, DeadLetter awssqs.IQueue
}

// ordered returns the work queues in the order of DESIGN.md's flows.
func (q *Queues) ordered() []namedQueue {
	out := []namedQueue{}
	for _, w := range []struct {
		name  string
		queue awssqs.IQueue
	}{{"Provisioning", q.Provisioning}, {"Interruption", q.Interruption}, {"Termination", q.Termination}, {"DisruptionWake", q.DisruptionWake}} {
		out = append(out, namedQueue{Name: w.name, Work: w.queue, DeadLetter: q.DeadLetter[w.name]})
	}
	return out
}
