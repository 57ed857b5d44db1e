// Command provisioner is the Lambda that runs provisioning: triggered by the provisioning FIFO queue (pod
// references from the webhook) and by a one-minute backstop schedule.
//
// Environment: NODEWRIGHT_CLUSTER_NAME and NODEWRIGHT_STATE_TABLE (required); NODEWRIGHT_CLUSTER_ENDPOINT,
// NODEWRIGHT_CLUSTER_CA, NODEWRIGHT_SERVICE_CIDR and NODEWRIGHT_KUBERNETES_VERSION (read from EKS
// DescribeCluster when unset).
package main

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/nodewright/nodewright/shared/instance"
	"github.com/nodewright/nodewright/shared/kube"
	"github.com/nodewright/nodewright/shared/launchtemplate"
	"github.com/nodewright/nodewright/shared/nodeclass"
	"github.com/nodewright/nodewright/shared/pricing"
	"github.com/nodewright/nodewright/shared/provisioning"
	"github.com/nodewright/nodewright/shared/state"
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
		if err := writeRunMetrics(os.Stdout, cluster, out, time.Now()); err != nil {
			log.Error("writing provisioning metrics", "error", err.Error())
		}
	}, log))
}

// build wires the provisioner from the environment; only start-up failures end the process.
func build(ctx context.Context) (*provisioning.Provisioner, error) {
	table := os.Getenv("NODEWRIGHT_STATE_TABLE")
	if table == "" {
		return nil, fmt.Errorf("NODEWRIGHT_STATE_TABLE is required")
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("loading AWS configuration: %w", err)
	}
	cluster, err := kube.ClusterFromEnv(ctx, os.Getenv, eks.NewFromConfig(cfg), kube.Need{Nodes: true})
	if err != nil {
		return nil, err
	}
	name := cluster.Name
	dns, err := dnsIP(cluster.ServiceCIDR)
	if err != nil {
		return nil, err
	}
	client, err := kube.Connect(cfg, cluster)
	if err != nil {
		return nil, err
	}
	prices, err := pricing.NewProvider(cfg.Region)
	if err != nil {
		return nil, err
	}
	ec2Client := ec2.NewFromConfig(cfg)
	store := state.New(state.NewClient(cfg), table)
	// Spot prices are the table the lifecycle function stores, loaded in the background off Lambda's
	// start-up budget and then by runs at most once a minute; EC2 is read only when nothing is stored.
	// Until prices arrive spot is priced at on-demand, never guessed lower.
	spot := provisioning.NewStoredSpotPrices(store, prices, provisioning.DefaultSpotPricesEvery, time.Now)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = warmSpotPrices(ctx, spot, func(ctx context.Context) error { return prices.RefreshSpot(ctx, ec2Client, time.Now()) })
	}()
	var seed [16]byte
	if _, err := crand.Read(seed[:]); err != nil {
		return nil, err
	}
	p := provisioning.New(provisioning.Config{
		Cluster: launchtemplate.Cluster{Name: name, Endpoint: cluster.Endpoint, CABundle: cluster.CA,
			ServiceCIDR: cluster.ServiceCIDR, DNSIP: dns},
		KubernetesVersion: cluster.Version,
	}, provisioning.Dependencies{
		Store:       store,
		Cluster:     kube.NewSnapshotter(client, kube.SnapshotOptions{}),
		NodeClasses: nodeclass.New(ec2Client, ssm.NewFromConfig(cfg), iam.NewFromConfig(cfg), name, cfg.Region, time.Now),
		Catalog:     ec2Client,
		Prices:      prices,
		Templates:   launchtemplate.New(ec2Client, name, time.Now),
		Launcher:    instance.New(ec2Client, name),
		Events:      kube.NewRecorder(client, kube.RecorderOptions{Instance: "provisioner"}),
		Now:         time.Now,
		Rand:        rand.New(rand.NewPCG(binary.LittleEndian.Uint64(seed[:8]), binary.LittleEndian.Uint64(seed[8:]))),
		SpotPrices:  spot,
	})
	// The catalog is read in the background too: the first run with pending pods finds it ready.
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = p.Catalog(ctx)
	}()
	return p, nil
}

// dnsIP is the cluster DNS service address EKS uses: the tenth address of the service range.
func dnsIP(serviceCIDR string) (string, error) {
	prefix, err := netip.ParsePrefix(serviceCIDR)
	if err != nil || !prefix.Addr().Is4() {
		return "", fmt.Errorf("service CIDR %q is not an IPv4 range", serviceCIDR)
	}
	a := prefix.Masked().Addr().As4()
	a[3] += 10
	return netip.AddrFrom4(a).String(), nil
}
