package provisioning

import (
	crand "crypto/rand"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"k8s.io/client-go/kubernetes"

	"github.com/nodewright/nodewright/shared/adapters/capacitybuffer"
	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/instancetypes"
	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/launchtemplate"
	"github.com/nodewright/nodewright/shared/adapters/nodeclass"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// AWSParts are what a function that launches brings to NewOnAWS: the AWS configuration, the cluster as
// EKS describes it, a client acting as the functions' identity, the state table, prices, and
// optionally stored spot prices and an Event publisher.
type AWSParts struct {
	Config     aws.Config
	Cluster    kube.Cluster
	Client     kubernetes.Interface
	Store      *state.Store
	Prices     instancetypes.Prices
	SpotPrices SpotPriceSource
	Events     EventPublisher
	// NodeClassCacheAge is how long the warm function keeps an EC2NodeClass's resolution (zero:
	// nodeclass.DefaultCacheAge).
	NodeClassCacheAge time.Duration
	// Buffers reads CapacityBuffers and writes their status (provisioning runs, gate CapacityBuffer);
	// nil for a function that only launches replacements.
	Buffers capacitybuffer.Cluster
	// Mirrors writes the NodeClaim mirrors of the claims a run launches (nil: none; the disruption
	// function's replacements are mirrored by the lifecycle function).
	Mirrors MirrorWriter
	// Isolated is set for a function in a VPC without internet access: node classes resolve without IAM,
	// which has no VPC endpoint (nodeclass.Resolver.WithoutIAM).
	Isolated bool
}

// SnapshotOptions are how a provisioner reads the cluster: whole, and, once warm, as current as the API
// server's watch cache (kube.SnapshotOptions.FromCache), so that a run with no pod or Node changed since
// the last reads no more than the revisions. A run that misses a change the cache has not yet applied
// (it trails etcd by milliseconds) leaves its batch unsatisfied, and the next run sees it.
var SnapshotOptions = kube.SnapshotOptions{FromCache: true}

// NewOnAWS wires a Provisioner as the deployed functions run it — functions/provisioner for pending pods,
// functions/disruption for replacements — so both launch through one path: EC2 for the catalog, fleets
// and launch templates, SSM and IAM for node classes, the cluster's join data in its IP family (NodeJoin)
// in the launch templates, the wall clock, and claim-name suffixes drawn from a crypto-seeded source.
func NewOnAWS(p AWSParts) (*Provisioner, error) {
	join, err := NodeJoin(p.Cluster)
	if err != nil {
		return nil, err
	}
	var seed [16]byte
	if _, err := crand.Read(seed[:]); err != nil {
		return nil, fmt.Errorf("seeding claim names: %w", err)
	}
	// EC2 throttles per account and API family with token buckets; the adaptive retry mode keeps a
	// client-side bucket that slows this client down when EC2 answers RequestLimitExceeded, so a run's
	// concurrent batches (MaxConcurrentLaunches) back off together instead of retrying into the limit.
	ec2Client := ec2.NewFromConfig(p.Config, func(o *ec2.Options) {
		o.Retryer = retry.NewAdaptiveMode()
	})
	name := p.Cluster.Name
	snapshots := kube.NewSnapshotter(p.Client, SnapshotOptions)
	resolver := nodeclass.New(ec2Client, ssm.NewFromConfig(p.Config), iam.NewFromConfig(p.Config), name, p.Config.Region, time.Now)
	if p.Isolated {
		resolver.WithoutIAM()
	}
	var mirrors *LaunchMirrors
	if p.Mirrors != nil {
		mirrors = &LaunchMirrors{Claims: p.Store, Writer: p.Mirrors}
	}
	return New(Config{
		Cluster:           join,
		KubernetesVersion: p.Cluster.Version,
		Region:            p.Config.Region,
	}, Dependencies{
		Store:       p.Store,
		Cluster:     snapshots,
		Pods:        snapshots,
		Visibility:  sqs.NewFromConfig(p.Config),
		NodeClasses: nodeclass.NewCache(resolver, p.NodeClassCacheAge, time.Now),
		Catalog:     ec2Client,
		Prices:      p.Prices,
		Templates:   launchtemplate.New(ec2Client, name, time.Now),
		Launcher:    instance.New(ec2Client, name),
		Events:      p.Events,
		Now:         time.Now,
		Rand:        rand.New(rand.NewPCG(binary.LittleEndian.Uint64(seed[:8]), binary.LittleEndian.Uint64(seed[8:]))),
		SpotPrices:  p.SpotPrices,
		Buffers:     p.Buffers,
		Mirrors:     mirrors,
	}), nil
}
