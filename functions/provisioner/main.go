// Command provisioner is the Lambda that runs provisioning: triggered by the provisioning FIFO queue (pod
// references from the webhook) and by a one-minute backstop schedule. It writes the NodeClaim mirror
// (nodewright.sh/v1) of each claim it launches once the launch is recorded (provisioning.LaunchMirrors).
//
// Environment: NODEWRIGHT_CLUSTER_NAME and NODEWRIGHT_STATE_TABLE (required); NODEWRIGHT_CLUSTER_ENDPOINT,
// NODEWRIGHT_CLUSTER_CA, NODEWRIGHT_SERVICE_CIDR, NODEWRIGHT_IP_FAMILY and NODEWRIGHT_KUBERNETES_VERSION
// (read from EKS DescribeCluster when unset).
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/service/ec2"

	"github.com/nodewright/nodewright/shared/adapters/connect"
	"github.com/nodewright/nodewright/shared/adapters/crash"
	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/mirror"
	"github.com/nodewright/nodewright/shared/flows/provisioning"
	"github.com/nodewright/nodewright/shared/flows/runmetrics"
)

func main() {
	log := lambdacontext.NewLogger()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := build(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "provisioner:", err)
		os.Exit(1)
	}
	cluster := os.Getenv(kube.EnvClusterName)
	lambda.Start(handler(p, func(out provisioning.Outcome) {
		if err := runmetrics.Provisioner(os.Stdout, cluster, out, time.Now()); err != nil {
			log.Error("writing provisioning metrics", "error", err.Error())
		}
	}, log))
}

// build wires the provisioner from the environment; only start-up failures end the process.
func build(ctx context.Context) (*provisioning.Provisioner, error) {
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
	// Prices are the tables the lifecycle function stores — on-demand from the Pricing API, spot from
	// EC2 — loaded in the background off Lambda's start-up budget and then by runs at most once a minute,
	// on-demand first (spot is floored at a share of it). Until an on-demand table is stored, or when it
	// cannot be read, the shipped table prices; EC2 is read for spot only when nothing is stored, and until
	// spot prices arrive spot is priced at on-demand, never guessed lower.
	stored := newStoredPrices(store, prices, time.Now)
	ec2Client := ec2.NewFromConfig(cfg)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = crash.Call(func() error { // a warm-up that panics must not end the process: runs load prices again
			return stored.warm(ctx, func(ctx context.Context) error { return prices.RefreshSpot(ctx, ec2Client, time.Now()) })
		})
	}()
	// The NodeClaim mirror (nodewright.sh/v1) of each claim a run launches is written as soon as the launch
	// is recorded; the lifecycle function keeps it from there.
	mirrors, err := mirror.NewClient(env.REST, mirror.NodeClaims, "nodewright-provisioner")
	if err != nil {
		return nil, err
	}
	writer := mirror.NewWriter(mirror.NodeClaims, mirrors, mirror.Options{})
	// NodeClaim Events (InsufficientCapacityError) go on the mirrors, with the UIDs the writer knows (a
	// metadata GET for the others; a claim that found no capacity may have none yet).
	events := mirror.NewClaimEvents(kube.NewRecorder(client, kube.RecorderOptions{Instance: "provisioner"}), writer, mirrors)
	p, err := provisioning.NewOnAWS(provisioning.AWSParts{Config: cfg, Cluster: cluster, Client: client, Store: store,
		Prices: prices, SpotPrices: stored.loaders(), Events: events,
		Isolated: prices.Isolated(), Buffers: kube.NewBuffers(client, ""),
		Mirrors: writer})
	if err != nil {
		return nil, err
	}
	// The catalog is read in the background too: the first run with pending pods finds it ready.
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = crash.Call(func() error { // the run reads the catalog itself when this fails
			_, err := p.Catalog(ctx)
			return err
		})
	}()
	return p, nil
}
