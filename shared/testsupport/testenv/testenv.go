// Package testenv holds what the test helpers for real local components share: how a helper reports a
// component it cannot start (fail under CI=true, skip elsewhere), free loopback ports, and waiting.
//
// It is imported only by test code and by the other test-helper packages (awstest, kubetest).
package testenv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"testing"
	"time"
)

// InCI reports whether the process runs under CI (CI=true), where a missing component is a failure.
func InCI() bool { return os.Getenv("CI") == "true" }

// Unavailable stops the test because a real component could not be started: under CI=true it fails the
// test, elsewhere it skips it with the same message so a developer without the component sees why.
func Unavailable(tb testing.TB, component string, err error) {
	tb.Helper()
	msg := fmt.Sprintf("%s is unavailable: %v", component, err)
	if InCI() {
		tb.Fatal(msg + " (CI=true: a test that cannot reach its real component fails)")
	}
	tb.Skip(msg + " (set CI=true to make this a failure)")
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free loopback port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// ErrExited is returned by Poll when the process being waited for has exited.
var ErrExited = errors.New("process exited")

// Poll calls ready every interval until it returns nil, ctx ends, or exited is closed. It returns the last
// error from ready when it gives up, so the caller can say what was not ready.
func Poll(ctx context.Context, interval time.Duration, exited <-chan struct{}, ready func(context.Context) error) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	var last error
	for {
		if last = ready(ctx); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %v)", ctx.Err(), last)
		case <-exited:
			return fmt.Errorf("%w (last: %v)", ErrExited, last)
		case <-t.C:
		}
	}
}
