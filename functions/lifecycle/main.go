// Command lifecycle is the Lambda behind the one-minute lifecycle schedule: it registers and initializes
// the Nodes of launched claims, asks for the replacement of unhealthy nodes (feature gate NodeRepair),
// writes the NodeClaim mirrors (nodewright.sh/v1, on change only), repairs what events missed (adopts interrupted launches, times out launches
// and registrations, terminates leaked instances, deletes ghost claims and Nodes), deletes the launch
// templates and instance profiles no claim uses any more, and refreshes prices into the state table, where
// the provisioner and disruption functions read them: spot prices from EC2 every run, on-demand prices from
// the AWS Pricing API every 12 hours (pricing:GetProducts).
//
// Environment: NODEWRIGHT_CLUSTER_NAME, NODEWRIGHT_STATE_TABLE and NODEWRIGHT_TERMINATION_QUEUE_URL
// (required; nodes the lifecycle decides to remove go through the termination flow's drain); NODEWRIGHT_CLUSTER_ENDPOINT
// and NODEWRIGHT_CLUSTER_CA (read from EKS DescribeCluster when unset). The API server is reached with EKS
// IAM tokens of the function's role.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/nodewright/nodewright/shared/adapters/connect"
	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/launchtemplate"
	"github.com/nodewright/nodewright/shared/adapters/mirror"
	"github.com/nodewright/nodewright/shared/adapters/nodeclass"
	"github.com/nodewright/nodewright/shared/adapters/pricing"
	"github.com/nodewright/nodewright/shared/flows/lifecycle"
	"github.com/nodewright/nodewright/shared/flows/runmetrics"
	"github.com/nodewright/nodewright/shared/flows/termination"
)

func main() {
	log := lambdacontext.NewLogger()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, refresh, err := build(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "lifecycle:", err)
		os.Exit(1)
	}
	cluster := os.Getenv(kube.EnvClusterName)
	lambda.Start(handler(r, refresh, func(rep lifecycle.RunReport) {
		if err := runmetrics.Lifecycle(os.Stdout, cluster, rep, time.Now()); err != nil {
			log.Error("writing lifecycle metrics", "error", err.Error())
		}
	}, log))
}

// build wires the runner and the price refreshes from the environment; only start-up failures end the
// process.
func build(ctx context.Context) (*lifecycle.Runner, priceRefresh, error) {
	env, err := connect.Load(ctx, os.Getenv, connect.Spec{Require: []string{"NODEWRIGHT_TERMINATION_QUEUE_URL"},
		Kube: true, Prices: true,
		// A warm invocation reads again only the claim shards that changed since the last one (state.ClaimsView).
		Store: &connect.Store{ClaimsView: true}})
	if err != nil {
		return nil, priceRefresh{}, err
	}
	cfg, name, restCfg, client, store := env.AWS, env.Cluster.Name, env.REST, env.Kube, env.Store
	queue := env.Var("NODEWRIGHT_TERMINATION_QUEUE_URL")
	// The NodeClaim mirrors (nodewright.sh/v1), written on change only; the writer learns what the cluster
	// holds with one metadata LIST when the process starts.
	mirrors, err := mirror.NewClient(restCfg, mirror.NodeClaims, "nodewright-lifecycle")
	if err != nil {
		return nil, priceRefresh{}, err
	}
	// In an isolated VPC (NODEWRIGHT_ISOLATED_VPC) the shipped table prices and the Pricing API is never called.
	prices := env.Prices
	ec2Client := ec2.NewFromConfig(cfg)
	launcher := instance.New(ec2Client, name)
	// In an isolated VPC IAM cannot be reached, and no node class has a profile Nodewright made (the CDK
	// app refuses spec.role there): nothing to clean up.
	var profiles lifecycle.UnusedProfiles
	if !prices.Isolated() {
		profiles = nodeclass.NewProfiles(iam.NewFromConfig(cfg), name, cfg.Region)
	}
	writer := mirror.NewWriter(mirror.NodeClaims, mirrors, mirror.Options{})
	// NodeClaim Events go on the mirrors, with the UIDs the writer knows (a metadata GET for the others).
	events := mirror.NewClaimEvents(kube.NewRecorder(client, kube.RecorderOptions{Instance: os.Getenv("AWS_LAMBDA_FUNCTION_NAME")}),
		writer, mirrors)
	// Between sweeps a pass reads only the joining claims and lists no instances (lifecycle.DefaultSweepEvery).
	r := lifecycle.NewRunner(lifecycle.RunnerConfig{SweepEvery: lifecycle.DefaultSweepEvery}, lifecycle.RunnerDeps{
		Store:        store,
		Nodes:        kube.NewNodeView(client, kube.SnapshotOptions{}),
		NodeActions:  kube.NewActions(client),
		Instances:    launcher,
		GoneReasons:  launcher,
		Unavailable:  store,
		Events:       events,
		Prices:       prices,
		Terminations: termination.NewSender(sqs.NewFromConfig(cfg), queue),
		Templates:    launchtemplate.New(ec2Client, name, time.Now),
		Profiles:     profiles,
		Namer:        launcher,
		Memory:       store,
		// Node repair (the NodeRepair feature gate) reads the impaired EC2 status checks once a sweep.
		Health:  instance.NewStatusChecks(ec2Client),
		Mirrors: writer,
		Now:     time.Now,
	})
	// On-demand prices come from the Pricing API (endpoint by pricing.EndpointRegion) every 12 hours and
	// are stored for the provisioner and disruption functions; until then, and whenever the API fails,
	// the last stored table or the shipped one prices.
	onDemand := pricing.NewOnDemandRefresher(prices, pricing.APISource{API: pricing.NewAPIClient(cfg)}, store, time.Now)
	return r, priceRefresh{spot: refreshSpot(prices, ec2Client, store, time.Now), onDemand: onDemand}, nil
}
