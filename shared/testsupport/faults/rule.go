package faults

import (
	"fmt"
	"time"
)

// Kind is the kind of fault injected.
type Kind string

const (
	// Throttle answers as a throttled service does: for AWS the service's throttling error in its
	// protocol's shape (EC2 RequestLimitExceeded 503, DynamoDB ProvisionedThroughputExceededException
	// 400, ...); for the API server 429 Too Many Requests with Retry-After.
	Throttle Kind = "throttle"
	// ServerError answers 500 with the service's internal-error shape.
	ServerError Kind = "server-error"
	// Drop fails the call as a connection reset by the peer does, before anything was sent.
	Drop Kind = "dropped-connection"
	// Latency delays the call by the rule's Delay, then sends it.
	Latency Kind = "latency"
)

// Kinds are the fault kinds, in report order.
var Kinds = []Kind{Throttle, ServerError, Drop, Latency}

// Failing says whether a call that meets the fault fails (latency only slows it).
func (k Kind) Failing() bool { return k != Latency }

// Target is where a call goes.
type Target string

const (
	// AWS is an AWS service (through the SDK's HTTP client).
	AWS Target = "aws"
	// Kube is the Kubernetes API server (through client-go's transport).
	Kube Target = "kube"
)

// Rule injects one kind of fault into a share of the matching calls.
type Rule struct {
	Target Target
	// Service is the SDK's service ID ("EC2", "DynamoDB", "SQS"; AWS only) and Operation the operation
	// name ("CreateFleet"), or for the API server the verb (get, list, watch, create, update, patch,
	// delete); Resource the API server's resource, with its subresource after a slash ("pods/eviction").
	// Empty matches anything.
	Service, Operation, Resource string
	Kind                         Kind
	// Probability is the share of matching calls that meet the fault, in [0, 1].
	Probability float64
	// Delay is a Latency fault's delay.
	Delay time.Duration
	// Limit caps the faults the rule injects (0: no cap); with Probability 1 and Limit 1 it fails the
	// first matching call only.
	Limit int
}

// Validate says what is wrong with the rule, naming the field.
func (r Rule) Validate() error {
	switch r.Target {
	case AWS, Kube:
	default:
		return fmt.Errorf("target %q: must be %q or %q", r.Target, AWS, Kube)
	}
	switch r.Kind {
	case Throttle, ServerError, Drop:
	case Latency:
		if r.Delay <= 0 || r.Delay > time.Minute {
			return fmt.Errorf("delay %s: a latency fault needs a delay above 0 and at most 1m", r.Delay)
		}
	default:
		return fmt.Errorf("kind %q: must be one of %v", r.Kind, Kinds)
	}
	if !(r.Probability >= 0 && r.Probability <= 1) {
		return fmt.Errorf("probability %v: must be between 0 and 1", r.Probability)
	}
	if r.Limit < 0 {
		return fmt.Errorf("limit %d: must not be negative", r.Limit)
	}
	if r.Target == Kube && r.Service != "" {
		return fmt.Errorf("service %q: API-server rules match by operation (verb) and resource", r.Service)
	}
	if r.Target == AWS && r.Resource != "" {
		return fmt.Errorf("resource %q: AWS rules match by service and operation", r.Resource)
	}
	return nil
}

// Call is one call the layer sees.
type Call struct {
	Target                       Target
	Service, Operation, Resource string
}

func (c Call) key() string {
	return string(c.Target) + "/" + c.Service + "/" + c.Operation + "/" + c.Resource
}

func (r Rule) matches(c Call) bool {
	return r.Target == c.Target && (r.Service == "" || r.Service == c.Service) &&
		(r.Operation == "" || r.Operation == c.Operation) && (r.Resource == "" || r.Resource == c.Resource)
}
