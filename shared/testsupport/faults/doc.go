// Package faults is a test-only fault layer for the functions' own HTTP clients: by rule and with a
// seed, it makes some of their AWS and API-server calls fail the way a busy or flaky service fails them
// (throttling in the service's own protocol shape, 500s, dropped connections) or arrive late.
//
// Every fault is decided before the request is sent, so nothing a faulted request would have changed
// reaches the service (CreateFleet in particular: moto ignores ClientToken, so a fault after the
// request was forwarded would show as a duplicate launch the real EC2 would not make). The SDK's
// retryer and client-go's retries see the same responses and errors they see in production.
package faults
