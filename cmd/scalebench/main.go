// Command scalebench is the scale harness behind `make bench-scale` (issue #23): for each tier it loads a
// cluster of realistic Nodes and pods into a fresh local control plane and moto, runs each function's use
// case in a child process of its own with the memory and timeout the CDK app gives it, and writes
// .bench/scale.json. See shared/testsupport/scalebench and its README.
//
// It is its own binary, not a `nodewright` subcommand, so the operator CLI carries none of the harness
// (the local control plane, moto, the generator), and the children it starts (itself, with the child
// subcommand) are as small as the harness allows.
//
// Usage:
//
//	scalebench [-tiers 1000,2000,5000] [-runs 3] [-functions provisioner,lifecycle,...] [-out .bench/scale.json]
//
// SCALE_TIERS and SCALE_RUNS give the defaults of -tiers and -runs.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/nodewright/nodewright/shared/testsupport/scalebench"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(os.Args) > 1 && os.Args[1] == "child" {
		if err := scalebench.RunChild(ctx, os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "scalebench child:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "scalebench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("scalebench", flag.ContinueOnError)
	tiers := fs.String("tiers", os.Getenv("SCALE_TIERS"), "node counts of the tiers to measure (1000, 2000, 5000); empty: all")
	runsDefault := 3
	if v := os.Getenv("SCALE_RUNS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("SCALE_RUNS: %q is not a positive count", v)
		}
		runsDefault = n
	}
	runs := fs.Int("runs", runsDefault, "repetitions per function and tier; the results are their medians")
	functions := fs.String("functions", strings.Join(scalebench.Functions, ","), "functions to measure")
	out := fs.String("out", ".bench/scale.json", "where to write the results")
	seed := fs.Uint64("seed", 1, "generator seed")
	try := fs.Int("try-nodes", 0, "measure one small tier of this many nodes (30 pods each) instead of -tiers, to try the harness")
	throughAPI := fs.Bool("load-through-api", false, "load Nodes, volumes and pods through the API server instead of straight into etcd (hours at 5,000 nodes)")
	apiGOGC := fs.Int("apiserver-gogc", 0, "GOGC for kube-apiserver (0: Go's default), to hold the 5,000-node tier's watch cache in less memory")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ts, err := scalebench.ParseTiers(*tiers)
	if err != nil {
		return err
	}
	if *try > 0 {
		ts = []scalebench.Tier{{Nodes: *try, Pods: 30 * *try}}
	}
	if *runs < 1 {
		return fmt.Errorf("-runs must be at least 1")
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	opts := scalebench.RunOptions{Tiers: ts, Functions: strings.Split(*functions, ","), Runs: *runs, Seed: *seed,
		Out: *out, Log: os.Stderr, Child: []string{self, "child"}, ThroughAPI: *throughAPI}
	if *apiGOGC > 0 {
		opts.APIServerEnv = []string{"GOGC=" + strconv.Itoa(*apiGOGC)}
	}
	results, err := scalebench.Run(ctx, opts)
	if len(results) > 0 {
		fmt.Fprintf(os.Stderr, "wrote %d results to %s\n", len(results), *out)
	}
	return err
}
