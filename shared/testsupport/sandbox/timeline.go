package sandbox

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// Timeline prints what happens, each line stamped with the time since the sandbox started, so a reader
// sees the loop unfold: trigger, solve, launch, join, bind.
type Timeline struct {
	mu    sync.Mutex
	start time.Time
	out   io.Writer
}

// NewTimeline starts a timeline writing to out (io.Discard for none).
func NewTimeline(out io.Writer) *Timeline { return &Timeline{start: time.Now(), out: out} }

// Restart makes now the timeline's zero, for a scenario's first step.
func (t *Timeline) Restart() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.start = time.Now()
}

// Since is the time since the timeline's zero.
func (t *Timeline) Since() time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	return time.Since(t.start)
}

// Printf writes one line for component.
func (t *Timeline) Printf(component, format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintf(t.out, "%+9.3fs  %-12s %s\n", time.Since(t.start).Seconds(), component, fmt.Sprintf(format, args...))
}
