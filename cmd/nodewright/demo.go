package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"sort"
	"strings"
	"time"

	"github.com/nodewright/nodewright/shared/testsupport/faults"
	"github.com/nodewright/nodewright/shared/testsupport/sandbox"
)

func init() {
	register("demo", command{summary: "run the local sandbox scenarios (moto + a local control plane + the real handlers)", run: runDemo})
}

// scenario runs one demo scenario in a fresh sandbox and says whether the loop worked (every pod where
// it should be, nothing leaked, no component error); the targets are in the report.
type scenario func(ctx context.Context, sb *sandbox.Sandbox, replicas int) (report any, worked bool, err error)

var scenarios = map[string]scenario{
	"scale-up": func(ctx context.Context, sb *sandbox.Sandbox, replicas int) (any, bool, error) {
		rep, err := sb.ScaleUp(ctx, sandbox.ScaleUpOptions{Replicas: int32(replicas)})
		return rep, err == nil && rep.PodsBound == rep.PodsRequested && rep.LeakedInstances == 0 && len(rep.Leaks) == 0 && len(rep.Errors) == 0, err
	},
	"coexistence": func(ctx context.Context, sb *sandbox.Sandbox, replicas int) (any, bool, error) {
		rep, err := sb.Coexistence(ctx, sandbox.CoexistenceOptions{ScaleUpOptions: sandbox.ScaleUpOptions{Replicas: int32(replicas)}})
		return rep, err == nil && rep.Worked(), err
	},
	"consolidation": func(ctx context.Context, sb *sandbox.Sandbox, replicas int) (any, bool, error) {
		rep, err := sb.Consolidation(ctx, sandbox.ConsolidationOptions{ScaleUpOptions: sandbox.ScaleUpOptions{Replicas: int32(replicas)},
			ScaleInTo: int32(max(replicas/5, 1))})
		return rep, err == nil && rep.Worked(), err
	},
	"drift": func(ctx context.Context, sb *sandbox.Sandbox, replicas int) (any, bool, error) {
		rep, err := sb.Drift(ctx, sandbox.DriftOptions{ScaleUpOptions: sandbox.ScaleUpOptions{Replicas: int32(replicas)}})
		return rep, err == nil && rep.Worked(), err
	},
	"expiry": func(ctx context.Context, sb *sandbox.Sandbox, replicas int) (any, bool, error) {
		rep, err := sb.Expiry(ctx, sandbox.ExpiryOptions{ScaleUpOptions: sandbox.ScaleUpOptions{Replicas: int32(replicas)}})
		return rep, err == nil && rep.Worked(), err
	},
	"headroom": func(ctx context.Context, sb *sandbox.Sandbox, replicas int) (any, bool, error) {
		rep, err := sb.Headroom(ctx, sandbox.HeadroomOptions{BufferSize: int32(replicas)})
		return rep, err == nil && rep.Worked(), err
	},
	"chaos": func(ctx context.Context, sb *sandbox.Sandbox, replicas int) (any, bool, error) {
		rep, err := sb.Chaos(ctx, sandbox.ScaleUpOptions{Replicas: int32(replicas)})
		return rep, err == nil && rep.Worked(), err
	},
	"burst": func(ctx context.Context, sb *sandbox.Sandbox, replicas int) (any, bool, error) {
		rep, err := sb.Burst(ctx, sandbox.BurstOptions{Replicas: int32(replicas)})
		return rep, err == nil && rep.Worked(), err
	},
	"detection": func(ctx context.Context, sb *sandbox.Sandbox, replicas int) (any, bool, error) {
		rep, err := sb.Detection(ctx, sandbox.DetectionOptions{Pods: replicas})
		return rep, err == nil && rep.Worked(), err
	},
	"spot-interruption": func(ctx context.Context, sb *sandbox.Sandbox, replicas int) (any, bool, error) {
		rep, err := sb.SpotInterruption(ctx, sandbox.ScaleUpOptions{Replicas: int32(replicas)})
		return rep, err == nil && rep.PodsLost == 0 && rep.DuplicateEventsActedOn == 0 && rep.InterruptedNodeGoneAfterSeconds >= 0 &&
			rep.LeakedInstances == 0 && len(rep.Leaks) == 0 && len(rep.Errors) == 0, err
	},
}

// defaultReplicas is each scenario's --replicas when the flag is not given; scenarios not listed take
// defaultScenarioReplicas.
var defaultReplicas = map[string]int{"burst": sandbox.DefaultBurstReplicas, "detection": sandbox.DefaultDetectionPods,
	"headroom": sandbox.DefaultHeadroomBufferSize}

const defaultScenarioReplicas = 30

func replicasFor(name string) int {
	if n, ok := defaultReplicas[name]; ok {
		return n
	}
	return defaultScenarioReplicas
}

func scenarioNames() []string {
	names := make([]string, 0, len(scenarios))
	for n := range scenarios {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// runDemo brings up the sandbox for each scenario asked for, runs it with a timeline on stdout, and writes
// the reports as JSON. It exits 1 when a scenario's loop did not work and 2 on usage errors.
func runDemo(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("nodewright demo", flag.ContinueOnError)
	fset.SetOutput(stderr)
	name := fset.String("scenario", "all", "scenario to run: "+strings.Join(scenarioNames(), ", ")+" or all")
	report := fset.String("report", "", "write the JSON report to `FILE` (one object per scenario with --scenario all)")
	logFile := fset.String("log", "", "write the functions' JSON logs to `FILE`")
	replicas := fset.Int("replicas", 0, fmt.Sprintf("replicas of the scenario's deployment (default %d; burst %d; detection: pods per pass, %d; headroom: the buffer's chunks and the scale-up's pods, %d)",
		defaultScenarioReplicas, sandbox.DefaultBurstReplicas, sandbox.DefaultDetectionPods, sandbox.DefaultHeadroomBufferSize))
	boot := fset.Duration("boot-delay", 3*time.Second, "how long an instance runs before its Node joins")
	seed := fset.Uint64("seed", 0, "the chaos scenario's fault seed (0: drawn at random; the report gives it)")
	if err := fset.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fset.NArg() > 0 {
		fmt.Fprintf(stderr, "nodewright demo: unexpected arguments %v\n", fset.Args())
		return 2
	}
	names := []string{*name}
	if *name == "all" {
		names = scenarioNames()
	} else if _, ok := scenarios[*name]; !ok {
		fmt.Fprintf(stderr, "nodewright demo: unknown scenario %q (have %s)\n", *name, strings.Join(scenarioNames(), ", "))
		return 2
	}
	replicasSet := false
	fset.Visit(func(f *flag.Flag) { replicasSet = replicasSet || f.Name == "replicas" })
	if replicasSet && *replicas < 1 {
		fmt.Fprintln(stderr, "nodewright demo: --replicas must be at least 1")
		return 2
	}
	var logs io.Writer = io.Discard
	if *logFile != "" {
		f, err := os.Create(*logFile)
		if err != nil {
			fmt.Fprintln(stderr, "nodewright demo:", err)
			return 1
		}
		defer f.Close()
		logs = f
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	reports := map[string]any{}
	code := 0
	for _, n := range names {
		fmt.Fprintf(stdout, "=== scenario %s\n", n)
		r := *replicas
		if !replicasSet {
			r = replicasFor(n)
		}
		rep, worked, err := runScenario(ctx, n, r, *boot, *seed, stdout, logs)
		if err != nil {
			fmt.Fprintf(stderr, "nodewright demo: %s: %v\n", n, err)
			return 1
		}
		reports[n] = rep
		body, _ := json.MarshalIndent(rep, "", "  ")
		fmt.Fprintf(stdout, "--- report %s\n%s\n", n, body)
		if !worked {
			fmt.Fprintf(stderr, "nodewright demo: scenario %s did not complete its loop (see the report)\n", n)
			code = 1
		}
	}
	if *report != "" {
		var out any = reports
		if len(names) == 1 {
			out = reports[names[0]]
		}
		body, _ := json.MarshalIndent(out, "", "  ")
		if err := os.WriteFile(*report, append(body, '\n'), 0o644); err != nil {
			fmt.Fprintln(stderr, "nodewright demo:", err)
			return 1
		}
	}
	return code
}

func runScenario(ctx context.Context, name string, replicas int, boot time.Duration, seed uint64, stdout, logs io.Writer) (any, bool, error) {
	startCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	opts := sandbox.Options{Out: stdout, Log: logs, BootDelay: boot}
	if name == "drift" || name == "consolidation" {
		// Their mirrorLagSeconds is measured with the lifecycle sweep as deployed, so that only the
		// disruption function's own mirror writes can make it short.
		opts.LifecycleSweepEvery = sandbox.DeployedLifecycleSweepEvery
	}
	if name == "headroom" { // the buffer's room and the static pool are kept by backstop runs
		opts.BackstopEvery = sandbox.HeadroomBackstopEvery
	}
	if name == "chaos" { // the fault layer goes on the functions' clients as they are built; the scenario arms it
		if seed == 0 {
			seed = rand.Uint64()
		}
		inj, err := faults.New(seed)
		if err != nil {
			return nil, false, err
		}
		opts.Faults = inj
	}
	sb, err := sandbox.Start(startCtx, opts)
	if err != nil {
		return nil, false, err
	}
	defer sb.Close()
	return scenarios[name](ctx, sb, replicas)
}
