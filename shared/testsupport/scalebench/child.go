package scalebench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/nodewright/nodewright/shared/core/sizing"
)

// ChildSpec is what the parent hands a child process (on its standard input): which function to run
// against which world, with the scenario's payload.
type ChildSpec struct {
	Function   string     `json:"function"`
	Tier       Tier       `json:"tier"`
	Connection Connection `json:"connection"`
	Payload    Payload    `json:"payload"`
	RunID      string     `json:"runId"`
}

// Payload is a scenario's input to the function: queue message bodies for the queue-driven functions.
type Payload struct {
	Messages []string `json:"messages,omitempty"`
}

// ChildResult is what the child writes on its standard output.
type ChildResult struct {
	MemoryMB int     `json:"memoryMB"`
	Cold     Measure `json:"cold"`
	Steady   Measure `json:"steady"`
	// Detail says what each run did (the use case's report), for the log.
	ColdDetail, SteadyDetail string
	// RSSResetFailed: the steady run's peak RSS includes the cold run's.
	RSSResetFailed bool `json:"rssResetFailed,omitempty"`
	// Error is what failed the cold or the steady run (a run that failed is measured up to its failure;
	// after a failed cold run there is no steady one).
	Error string `json:"error,omitempty"`
}

// RunChild is the child process: it reads a ChildSpec from in, wires the function's use case, runs it
// once cold and once more warm with nothing changed, each under the function's timeout, and writes a
// ChildResult to out. The parent sets GOMEMLIMIT from the same size.
func RunChild(ctx context.Context, in io.Reader, out io.Writer) error {
	var spec ChildSpec
	if err := json.NewDecoder(in).Decode(&spec); err != nil {
		return fmt.Errorf("reading the child spec: %w", err)
	}
	sizes, err := sizing.For(spec.Tier.Pods)
	if err != nil {
		return err
	}
	size := sizes[spec.Function]
	meter := &Meter{Bytes: &ByteCounter{}, Units: &ReadUnits{}}
	p, err := newParts(spec.Connection, meter.Bytes, meter.Units)
	if err != nil {
		return err
	}
	res := ChildResult{MemoryMB: size.MemoryMB}
	initCtx, cancel := context.WithTimeout(ctx, 10*time.Second+size.Timeout)
	invoke, err := wire(initCtx, spec.Function, p, spec.Payload)
	cancel()
	if err != nil {
		return err
	}
	run := func(n int) (Measure, string, error) {
		ctx, cancel := context.WithTimeout(ctx, size.Timeout)
		defer cancel()
		stopProfile := startProfile(spec.Function, n)
		meter.Start()
		detail, err := invoke(ctx, fmt.Sprintf("%s-%d", spec.RunID, n))
		m, merr := meter.Stop()
		stopProfile()
		if err == nil {
			err = merr
		}
		return m, detail, err
	}
	if res.Cold, res.ColdDetail, err = run(1); err != nil {
		res.Error = fmt.Sprintf("%s (cold): %v; %s", spec.Function, err, res.ColdDetail)
	} else if res.Steady, res.SteadyDetail, err = run(2); err != nil {
		res.Error = fmt.Sprintf("%s (steady): %v; %s", spec.Function, err, res.SteadyDetail)
	}
	res.RSSResetFailed = meter.RSSResetFailed
	fmt.Fprintf(os.Stderr, "%s cold: %s\n%s steady: %s\n", spec.Function, res.ColdDetail, spec.Function, res.SteadyDetail)
	return json.NewEncoder(out).Encode(res)
}
