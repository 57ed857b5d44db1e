package e2e

import (
	"context"
	"fmt"
	"runtime/metrics"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/flows/disruptionrun"
	"github.com/nodewright/nodewright/shared/flows/termination"
)

// Where a large-cluster run spends its time: every adapter call timed, and the heap sampled.

type timings struct {
	start time.Time
	mu    sync.Mutex
	calls []call
}

type call struct {
	name       string
	start, end time.Time
}

func (t *timings) time(name string) func() {
	start := time.Now()
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		t.calls = append(t.calls, call{name: name, start: start, end: time.Now()})
	}
}

// decision is the time from the start of the run to the end of its first Decide: the first decision
// record written after it (recordKept runs right after Decide) when there is one, else the end of the
// first catalog read plus Decide (the input's assembly, in memory, uncounted).
func (t *timings) decision(run, decide time.Duration) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range t.calls {
		if c.name == "record-decisions" {
			return c.start.Sub(t.start)
		}
	}
	for _, c := range t.calls {
		if c.name == "catalog" {
			return c.end.Sub(t.start) + decide
		}
	}
	return run
}

type phase struct {
	name string
	took time.Duration
}

// phases sums the time of each kind of call before the first decision, named for the metrics:
// snapshot (the API server: the run's one read, shared by advance and the decision), claims, commands and config (DynamoDB), catalog.
func (t *timings) phases() []phase {
	t.mu.Lock()
	defer t.mu.Unlock()
	sums := map[string]time.Duration{}
	for _, c := range t.calls {
		if c.name == "record-decisions" {
			break
		}
		sums[c.name] += c.end.Sub(c.start)
	}
	var out []phase
	for _, name := range []string{"snapshot", "claims", "commands", "config", "catalog"} {
		out = append(out, phase{name: name, took: sums[name]})
	}
	return out
}

// total is the time spent in every call named name, and how many there were.
func (t *timings) total(name string) (time.Duration, int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var sum time.Duration
	n := 0
	for _, c := range t.calls {
		if c.name == name {
			sum += c.end.Sub(c.start)
			n++
		}
	}
	return sum, n
}

// String lists the calls in the order they started: name@start+duration.
func (t *timings) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	cs := slices.Clone(t.calls)
	sort.Slice(cs, func(i, j int) bool { return cs[i].start.Before(cs[j].start) })
	var parts []string
	for _, c := range cs {
		parts = append(parts, fmt.Sprintf("%s@%.2fs+%.2fs", c.name, c.start.Sub(t.start).Seconds(), c.end.Sub(c.start).Seconds()))
	}
	return strings.Join(parts, " ")
}

// timedStore, timedCluster and timedLauncher time the reads of a run.
type timedStore struct {
	*state.Store
	tm *timings
}

func (s timedStore) ListClaims(ctx context.Context) ([]state.Claim, error) {
	defer s.tm.time("claims")()
	return s.Store.ListClaims(ctx)
}

func (s timedStore) ListDisruptionCommands(ctx context.Context) ([]state.DisruptionCommand, error) {
	defer s.tm.time("commands")()
	return s.Store.ListDisruptionCommands(ctx)
}

func (s timedStore) ListConfig(ctx context.Context, kind string) ([]state.ConfigItem, error) {
	defer s.tm.time("config")()
	return s.Store.ListConfig(ctx, kind)
}

func (s timedStore) ReserveDisruption(ctx context.Context, nodePool, claim string, allowed int) error {
	defer s.tm.time("reserve")()
	return s.Store.ReserveDisruption(ctx, nodePool, claim, allowed)
}

func (s timedStore) RecordDecisions(ctx context.Context, ds []state.Decision) error {
	defer s.tm.time("record-decisions")()
	return s.Store.RecordDecisions(ctx, ds)
}

type timedCluster struct {
	r  disruptionrun.ClusterReader
	tm *timings
}

func (c timedCluster) Snapshot(ctx context.Context) (*kube.Snapshot, error) {
	defer c.tm.time("snapshot")()
	return c.r.Snapshot(ctx)
}

type timedNodes struct {
	disruptionrun.NodeActions
	tm *timings
}

func (n timedNodes) Taint(ctx context.Context, node string, taint corev1.Taint) error {
	defer n.tm.time("taint")()
	return n.NodeActions.Taint(ctx, node, taint)
}

type timedTerminations struct {
	disruptionrun.Terminations
	tm *timings
}

func (t timedTerminations) Send(ctx context.Context, req termination.Request) error {
	defer t.tm.time("terminate")()
	return t.Terminations.Send(ctx, req)
}

type timedLauncher struct {
	disruptionrun.Launcher
	tm *timings
}

func (l timedLauncher) PrepareLaunches(ctx context.Context) (disruptionrun.Launches, error) {
	defer l.tm.time("catalog")()
	return l.Launcher.PrepareLaunches(ctx)
}

// heapObjectBytes is the heap held by objects, live or not yet swept.
func heapObjectBytes() uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	return sample[0].Value.Uint64()
}

// sampleHeap records the largest heap seen every 5 ms until the returned stop is called (garbage not yet
// swept included: what the function's memory must hold).
func sampleHeap(peak *uint64) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	record := func() { *peak = max(*peak, heapObjectBytes()) }
	go func() {
		defer close(finished)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			record()
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); <-finished; record() }
}
