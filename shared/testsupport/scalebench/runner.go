package scalebench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/nodewright/nodewright/shared/core/sizing"
)

// RunOptions choose what a bench run measures.
type RunOptions struct {
	Tiers     []Tier
	Functions []string
	// Runs is how many repetitions each median is over (SCALE_RUNS).
	Runs int
	Seed uint64
	// Out is the JSON file (.bench/scale.json); Log receives progress.
	Out string
	Log io.Writer
	// Child is the command that runs one child (this binary with the child subcommand).
	Child []string
	// ThroughAPI loads Nodes, volumes and pods through the API server (two writes each, as their
	// controllers and kubelets make them) instead of straight into its storage: slower by two orders of
	// magnitude, for checking that both give the functions the same cluster.
	ThroughAPI bool
	// APIServerEnv is added to kube-apiserver's environment (GOGC, GOMEMLIMIT).
	APIServerEnv []string
}

// Run measures every function at every tier: per tier a fresh world, loaded once, then per function and
// repetition a child process. The results so far are written to Out after each function, so an
// interrupted run keeps what it measured.
func Run(ctx context.Context, o RunOptions) ([]Result, error) {
	var results []Result
	for _, tier := range o.Tiers {
		rs, err := runTier(ctx, o, tier, results)
		results = append(results, rs...)
		if err != nil {
			return results, err
		}
	}
	return results, nil
}

func runTier(ctx context.Context, o RunOptions, tier Tier, earlier []Result) ([]Result, error) {
	fmt.Fprintf(o.Log, "tier %s: starting etcd, kube-apiserver and moto\n", tier)
	env, err := StartEnv(ctx, o.APIServerEnv)
	if err != nil {
		return nil, err
	}
	defer env.Close()
	plan, err := NewPlan(o.Seed, tier, time.Now())
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Log, "tier %s: loading %d namespaces, %d workloads, %d Nodes, %d pods\n", tier, len(plan.Namespaces), len(plan.Workloads), len(plan.Nodes), len(plan.Pods))
	loaded, err := Load(ctx, env, plan, o.ThroughAPI, o.Log)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Log, "tier %s: loaded in %.0fs\n", tier, loaded.Total().Seconds())
	var results []Result
	for _, fn := range o.Functions {
		r, err := runFunction(ctx, o, env, loaded, fn)
		if err != nil {
			return results, fmt.Errorf("tier %s, %s: %w", tier, fn, err)
		}
		results = append(results, r)
		if err := WriteResults(o.Out, append(append([]Result(nil), earlier...), results...)); err != nil {
			return results, err
		}
	}
	return results, nil
}

func runFunction(ctx context.Context, o RunOptions, env *Env, l *Loaded, fn string) (Result, error) {
	sc, err := NewScenario(fn, env, l)
	if err != nil {
		return Result{}, err
	}
	var runs []ChildResult
	for rep := 0; rep < o.Runs; rep++ {
		payload, err := sc.Arrange(ctx, rep)
		if err != nil {
			return Result{}, fmt.Errorf("arranging: %w", err)
		}
		res, err := runChild(ctx, o, ChildSpec{Function: fn, Tier: l.Plan.Tier, Connection: env.Connection(), Payload: payload,
			RunID: fmt.Sprintf("bench-%s-%d", fn, rep)})
		if err != nil {
			return Result{}, err
		}
		fmt.Fprintf(o.Log, "  %-12s run %d: cold %.1fs rss %.0f MB heap %.0f MB api %.1f MB ddb %.0f RU | steady %.1fs rss %.0f MB api %.1f MB ddb %.0f RU\n",
			fn, rep+1, res.Cold.Seconds, res.Cold.PeakRSSMB, res.Cold.PeakHeapMB, float64(res.Cold.APIServerBytesRead)/(1<<20), res.Cold.DynamoReadUnits,
			res.Steady.Seconds, res.Steady.PeakRSSMB, float64(res.Steady.APIServerBytesRead)/(1<<20), res.Steady.DynamoReadUnits)
		fmt.Fprintf(o.Log, "               cold: %s\n               steady: %s\n", res.ColdDetail, res.SteadyDetail)
		runs = append(runs, res)
		if err := sc.Tidy(ctx, rep); err != nil {
			return Result{}, fmt.Errorf("tidying: %w", err)
		}
		if res.Error != "" {
			// The function failed within its deadline or memory: recorded as such, not repeated, and the
			// tier goes on with the next function.
			fmt.Fprintf(o.Log, "               FAILED: %s\n", res.Error)
			break
		}
	}
	if err := sc.Finish(ctx); err != nil {
		return Result{}, fmt.Errorf("finishing: %w", err)
	}
	return NewResult(fn, l.Plan.Tier, runs), nil
}

// runChild runs one child with GOMEMLIMIT at 90% of the function's memory, as the CDK app sets it, and
// reads its result. Its log lines go to o.Log.
func runChild(ctx context.Context, o RunOptions, spec ChildSpec) (ChildResult, error) {
	sizes, err := sizing.For(spec.Tier.Pods)
	if err != nil {
		return ChildResult{}, err
	}
	size := sizes[spec.Function]
	in, err := json.Marshal(spec)
	if err != nil {
		return ChildResult{}, err
	}
	// Two invocations plus start-up; the child bounds each invocation itself.
	ctx, cancel := context.WithTimeout(ctx, 2*size.Timeout+2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, o.Child[0], o.Child[1:]...)
	cmd.Env = append(os.Environ(), "GOMEMLIMIT="+size.GoMemLimit())
	cmd.Stdin = bytes.NewReader(in)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return ChildResult{}, fmt.Errorf("child %s: %w\n%s", spec.Function, err, tail(stderr.String(), 4000))
	}
	var res ChildResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		return ChildResult{}, fmt.Errorf("child %s: reading its result: %w\n%s", spec.Function, err, tail(stderr.String(), 4000))
	}
	return res, nil
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
