// Command disruption is the Lambda that runs consolidation: triggered every minute by an EventBridge
// schedule and woken through its SQS queue when the termination flow removes a claim. Each invocation is
// one consolidation run (shared/flows/disruptionrun): commands in progress advanced or rolled back, then new
// commands decided, validated and executed replacement first, under the cluster's "disruption" lease.
// From each run's first complete read it also writes the NodePool and EC2NodeClass mirrors
// (nodewright.sh/v1, on change only) and the Events on them (shared/adapters/mirror).
//
// Environment: NODEWRIGHT_CLUSTER_NAME, NODEWRIGHT_STATE_TABLE and NODEWRIGHT_TERMINATION_QUEUE_URL
// (required: disrupted nodes are drained by the termination flow); NODEWRIGHT_CLUSTER_ENDPOINT,
// NODEWRIGHT_CLUSTER_CA, NODEWRIGHT_SERVICE_CIDR, NODEWRIGHT_IP_FAMILY and NODEWRIGHT_KUBERNETES_VERSION
// (read from EKS DescribeCluster when unset; replacements join the cluster with them);
// NODEWRIGHT_DISRUPTION_VALIDATION_DELAY (a Go duration, default 15s: the wait before a decision is
// re-checked on a fresh snapshot). Karpenter's settings (the SpotToSpotConsolidation gate, the minValues
// and preference policies) are read from the state table with the NodePools, as the CDK app stored them.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/nodewright/nodewright/shared/adapters/connect"
	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/mirror"
	"github.com/nodewright/nodewright/shared/adapters/nodeclass"
	"github.com/nodewright/nodewright/shared/flows/disruptionrun"
	"github.com/nodewright/nodewright/shared/flows/provisioning"
	"github.com/nodewright/nodewright/shared/flows/runmetrics"
	"github.com/nodewright/nodewright/shared/flows/termination"
)

func main() {
	log := lambdacontext.NewLogger()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := readSettings(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "disruption:", err)
		os.Exit(1)
	}
	r, err := build(ctx, s)
	if err != nil {
		fmt.Fprintln(os.Stderr, "disruption:", err)
		os.Exit(1)
	}
	lambda.Start(handler(r, func(rep disruptionrun.Report) {
		if err := runmetrics.Disruption(os.Stdout, s.cluster, rep, time.Now()); err != nil {
			log.Error("writing disruption metrics", "error", err.Error())
		}
	}, log))
}

// settings are the environment's.
type settings struct {
	cluster, table, terminationQueue string
	validationDelay                  time.Duration
}

// readSettings reads the environment and names what is missing or malformed.
func readSettings(getenv func(string) string) (settings, error) {
	s := settings{cluster: getenv(kube.EnvClusterName), table: getenv("NODEWRIGHT_STATE_TABLE"),
		terminationQueue: getenv("NODEWRIGHT_TERMINATION_QUEUE_URL")}
	for name, v := range map[string]string{kube.EnvClusterName: s.cluster, "NODEWRIGHT_STATE_TABLE": s.table,
		"NODEWRIGHT_TERMINATION_QUEUE_URL": s.terminationQueue} {
		if v == "" {
			return s, fmt.Errorf("%s is required", name)
		}
	}
	if v := getenv("NODEWRIGHT_DISRUPTION_VALIDATION_DELAY"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return s, fmt.Errorf("NODEWRIGHT_DISRUPTION_VALIDATION_DELAY: %q is not a duration", v)
		}
		s.validationDelay = d
		if d == 0 {
			s.validationDelay = -1 // none
		}
	}
	return s, nil
}

// build wires the runner from the environment; only start-up failures end the process.
func build(ctx context.Context, s settings) (*disruptionrun.Runner, error) {
	// A launching function needs the service CIDR and version, from EKS when the environment lacks them.
	// In an isolated VPC (NODEWRIGHT_ISOLATED_VPC) the shipped table prices and the Pricing API is never
	// called. A warm invocation reads again only the claim shards that changed since the last one
	// (state.ClaimsView); launch and disruption decisions of an isolated function say what priced them
	// (state.WithPriceNote).
	env, err := connect.Load(ctx, os.Getenv, connect.Spec{Kube: true, Need: kube.Need{Nodes: true}, Prices: true,
		Store: &connect.Store{ClaimsView: true, PriceNote: true}})
	if err != nil {
		return nil, err
	}
	cfg, cluster, client, prices, store := env.AWS, env.Cluster, env.Kube, env.Prices, env.Store
	recorder := kube.NewRecorder(client, kube.RecorderOptions{Instance: "disruption"})
	// The NodePool and EC2NodeClass mirrors (nodewright.sh/v1), written on change only from each run's
	// read; each writer learns what the cluster holds with one metadata LIST when the process starts.
	statusWriter, err := mirror.NewConfigStatusWriter(env.REST, "nodewright-disruption", recorder)
	if err != nil {
		return nil, err
	}
	// NodeClaim Events (DisruptionLaunching... on the disrupted claims, InsufficientCapacityError on a
	// replacement) go on the claims' NodeClaim mirrors, with the UID of a bounded, cached metadata GET.
	events, err := mirror.NewConfigClaimEvents(env.REST, recorder, nil)
	if err != nil {
		return nil, err
	}
	// The NodeClaim mirrors of the claims a run changes (a command's candidates, drift, replacements)
	// follow within seconds of the run, without waiting for the lifecycle's sweep.
	claimMirrors, err := mirror.NewClaimFollower(env.REST, "nodewright-disruption")
	if err != nil {
		return nil, err
	}
	// Replacements go through a provisioner's launch path: the same catalog, node classes, templates,
	// prices (the stored on-demand and spot tables, as the provisioner loads them; the shipped on-demand
	// table until one is stored) and claim-first launches.
	p, err := provisioning.NewOnAWS(provisioning.AWSParts{Config: cfg, Cluster: cluster, Client: client, Store: store,
		Prices: prices, SpotPrices: storedPrices(store, prices, time.Now), Events: events, Isolated: prices.Isolated()})
	if err != nil {
		return nil, err
	}
	return disruptionrun.New(disruptionrun.Config{ValidationDelay: s.validationDelay},
		disruptionrun.Deps{
			Store:        store,
			Cluster:      kube.NewSnapshotter(client, kube.SnapshotOptions{}),
			Launcher:     disruptionrun.ProvisionerLauncher{P: p},
			Nodes:        kube.NewActions(client),
			Terminations: termination.NewSender(sqs.NewFromConfig(cfg), s.terminationQueue),
			Events:       events,
			// Reservations no EC2NodeClass selects any more are looked up by id, to tell an ended one
			// (its nodes demoted to on-demand) from one still running.
			Reservations: nodeclass.NewReservationLookup(ec2.NewFromConfig(cfg)),
			// CapacityBuffers are read (gate CapacityBuffer) so consolidation keeps their room.
			Buffers:      kube.NewBuffers(client, ""),
			Mirrors:      statusWriter,
			ClaimMirrors: claimMirrors,
			Now:          time.Now,
		}), nil
}
