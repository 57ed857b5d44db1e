package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis/manifest"
	"github.com/nodewright/nodewright/shared/core/settings"
)

func init() {
	register("apply", command{summary: "validate manifests and write them into a deployed state table", run: runApply})
}

// loadAWSConfig is replaced in tests to point the command at moto.
var loadAWSConfig = func(ctx context.Context, region string) (aws.Config, error) {
	var opts []func(*awsconfig.LoadOptions) error
	if region != "" {
		opts = append(opts, awsconfig.WithRegion(region))
	}
	return awsconfig.LoadDefaultConfig(ctx, opts...)
}

// runApply validates like `nodewright validate` and, when everything is valid, makes the configuration in
// the state table match: new objects created, changed ones written with the next version, unchanged ones
// left alone, and with --prune objects missing from the files deleted — unless that drops an EC2NodeClass
// that claims which are not deleted still use: then nothing is applied (state.ErrNodeClassInUse names the
// classes and their claim counts), as Karpenter's finalizer keeps such a class. For quick changes between deploys;
// the next `cdk deploy` writes the manifests its context names.
// storedGates are the feature gates of the deployment's stored settings (the CDK app writes them; the
// defaults when there are none).
func storedGates(ctx context.Context, store *state.Store) (settings.FeatureGates, error) {
	it, err := store.GetConfig(ctx, state.KindSettings, state.SettingsName)
	if state.IsNotFound(err) {
		return settings.DefaultFeatureGates(), nil
	}
	if err != nil {
		return settings.FeatureGates{}, err
	}
	var s settings.Settings
	if err := json.Unmarshal([]byte(it.Spec), &s); err != nil {
		return settings.FeatureGates{}, fmt.Errorf("decoding the stored settings: %w", err)
	}
	return s.FeatureGates, nil
}

func runApply(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("nodewright apply", flag.ContinueOnError)
	fset.SetOutput(stderr)
	var files fileList
	fset.Var(&files, "f", "manifest `FILE`, DIR or - for stdin; repeatable")
	tf := addTableFlags(fset)
	prune := fset.Bool("prune", false, "delete stored NodePools and EC2NodeClasses that the files do not contain; "+
		"removing an EC2NodeClass that NodeClaims still use is refused and nothing is applied")
	fset.Usage = func() {
		fmt.Fprintln(stderr, "Usage: nodewright apply -f FILE|DIR|- [-f ...] --table NAME [--region REGION] [--prune]")
		fset.PrintDefaults()
	}
	if err := fset.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if len(files) == 0 || *tf.table == "" || fset.NArg() > 0 {
		fset.Usage()
		return 2
	}
	objs, problems := manifest.Check(stdin, files...)
	if len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintln(stderr, p)
		}
		fmt.Fprintf(stderr, "%d %s found; nothing applied\n", len(problems), plural(len(problems), "problem", "problems"))
		return 1
	}
	items, err := state.ConfigItemsFrom(objs)
	if err != nil {
		fmt.Fprintln(stderr, "nodewright apply:", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	store, err := tf.open(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "nodewright apply:", err)
		return 1
	}
	// The deployment's functions take static NodePools and NodeOverlays only with their gates on: refuse
	// to store what they would not apply.
	gates, err := storedGates(ctx, store)
	if err != nil {
		fmt.Fprintln(stderr, "nodewright apply: reading the deployment's settings for its feature gates:", err)
		return 1
	}
	if problems := gateProblems(objs, gates); len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintln(stderr, p)
		}
		fmt.Fprintf(stderr, "%d %s found (the deployment's featureGates are %s); nothing applied\n",
			len(problems), plural(len(problems), "problem", "problems"), gates)
		return 1
	}
	res, err := store.ApplyConfig(ctx, items, *prune)
	if err != nil {
		fmt.Fprintln(stderr, "nodewright apply:", err)
		return 1
	}
	for _, line := range []struct {
		verb string
		ids  []string
	}{{"created", res.Created}, {"updated", res.Updated}, {"unchanged", res.Unchanged}, {"deleted", res.Deleted}} {
		for _, id := range line.ids {
			fmt.Fprintf(stdout, "%s %s\n", strings.ToLower(id), line.verb)
		}
	}
	return 0
}
