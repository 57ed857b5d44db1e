package scalebench

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"k8s.io/client-go/kubernetes"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/launchtemplate"
	"github.com/nodewright/nodewright/shared/adapters/nodeclass"
	"github.com/nodewright/nodewright/shared/adapters/pricing"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/sizing"
	"github.com/nodewright/nodewright/shared/flows/disruptionrun"
	"github.com/nodewright/nodewright/shared/flows/interruption"
	"github.com/nodewright/nodewright/shared/flows/lifecycle"
	"github.com/nodewright/nodewright/shared/flows/provisioning"
	"github.com/nodewright/nodewright/shared/flows/termination"
)

// invocation is one invocation of a function's use case, with the payload its scenario prepared.
type invocation func(ctx context.Context, runID string) (detail string, err error)

// parts are what every function's wiring starts from, as its main.go builds them from the environment:
// the AWS configuration (moto, with the read-unit counter), the cluster, and a protobuf clientset (the
// admin's, with the byte counter; kube.Connect's EKS tokens have no local equivalent).
type parts struct {
	cfg     aws.Config
	cluster kube.Cluster
	client  kubernetes.Interface
	store   *state.Store
	queues  Connection
	log     *slog.Logger
}

func newParts(c Connection, bytes *ByteCounter, units *ReadUnits) (parts, error) {
	rc, err := c.RESTConfig()
	if err != nil {
		return parts{}, err
	}
	bytes.Wrap(rc)
	client, err := kube.NewClientset(rc)
	if err != nil {
		return parts{}, err
	}
	cfg := c.AWSConfig()
	units.Instrument(&cfg)
	return parts{cfg: cfg, client: client, store: state.New(state.NewClient(cfg), Table), queues: c,
		cluster: kube.Cluster{Name: Cluster, Endpoint: c.APIServer, CA: c.CA, Version: "1.34", ServiceCIDR: "10.0.0.0/24"},
		log:     slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}, nil
}

// storedPrices are the tables the lifecycle function stores, as the provisioner and disruption
// functions load them.
func (p parts) storedPrices(prices *pricing.Provider) pricing.Loaders {
	return pricing.Loaders{pricing.NewStoredOnDemand(p.store, prices, pricing.DefaultOnDemandEvery, time.Now),
		provisioning.NewStoredSpotPrices(p.store, prices, provisioning.DefaultSpotPricesEvery, time.Now)}
}

// wire builds function fn's use case as functions/<fn>/main.go does and returns its invocation for the
// scenario's payload. Start-up work the function does at init (the provisioner's catalog) is done here.
func wire(ctx context.Context, fn string, p parts, payload Payload) (invocation, error) {
	switch fn {
	case sizing.Provisioner, sizing.Lifecycle, sizing.Disruption:
		// As their main.go: a warm function keeps a view of the claims.
		p.store = state.New(state.NewClient(p.cfg), Table, state.WithClaimsView())
	}
	switch fn {
	case sizing.Provisioner:
		return wireProvisioner(ctx, p)
	case sizing.Lifecycle:
		return wireLifecycle(p)
	case sizing.Disruption:
		return wireDisruption(p)
	case sizing.Termination:
		return wireTermination(p, payload)
	case sizing.Interruption:
		return wireInterruption(p, payload)
	}
	return nil, fmt.Errorf("no scenario for function %q", fn)
}

func wireProvisioner(ctx context.Context, p parts) (invocation, error) {
	prices, err := pricing.NewProvider(p.cfg.Region)
	if err != nil {
		return nil, err
	}
	prov, err := provisioning.NewOnAWS(provisioning.AWSParts{Config: p.cfg, Cluster: p.cluster, Client: p.client, Store: p.store,
		Prices: prices, SpotPrices: p.storedPrices(prices), Events: kube.NewRecorder(p.client, kube.RecorderOptions{Instance: "provisioner"})})
	if err != nil {
		return nil, err
	}
	if _, err := prov.Catalog(ctx); err != nil { // main.go reads it in the background at init
		return nil, fmt.Errorf("reading the catalog: %w", err)
	}
	return func(ctx context.Context, runID string) (string, error) {
		out := prov.Handle(ctx, runID, provisioning.Trigger{}) // the backstop schedule
		rep := out.Report
		detail := fmt.Sprintf("lease %t, %d pending, %d in flight, %d claims launched, %d unschedulable, %d errors%s; %s",
			rep.Lease, rep.PendingPods, rep.InFlight, len(rep.Claims), len(rep.Unschedulable), len(rep.Errors), firstError(rep.Errors),
			runPhases(out.Timings))
		if out.Err == nil && !rep.Lease {
			return detail, fmt.Errorf("the provisioner lease was held elsewhere")
		}
		return detail, out.Err
	}, nil
}

// runPhases says how long each run of an invocation took, phase by phase (provisioning.RunTiming), in
// milliseconds: where a run's time goes at the tier's size.
func runPhases(runs []provisioning.RunTiming) string {
	var b strings.Builder
	for i, t := range runs {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "run %d/%d: %s", i+1, len(runs), t.Phases())
	}
	return b.String()
}

func wireLifecycle(p parts) (invocation, error) {
	prices, err := pricing.NewProvider(p.cfg.Region)
	if err != nil {
		return nil, err
	}
	e := ec2.NewFromConfig(p.cfg)
	launcher := instance.New(e, Cluster)
	r := lifecycle.NewRunner(lifecycle.RunnerConfig{SweepEvery: lifecycle.DefaultSweepEvery}, lifecycle.RunnerDeps{ // as main.go
		Store: p.store, Nodes: kube.NewNodeView(p.client, kube.SnapshotOptions{}), NodeActions: kube.NewActions(p.client), Instances: launcher,
		GoneReasons: launcher, Unavailable: p.store, Events: kube.NewRecorder(p.client, kube.RecorderOptions{Instance: "lifecycle"}),
		Prices: prices, Terminations: termination.NewSender(sqs.NewFromConfig(p.cfg), p.queues.Queues.Termination),
		Templates: launchtemplate.New(e, Cluster, time.Now), Profiles: nodeclass.NewProfiles(iam.NewFromConfig(p.cfg), Cluster, p.cfg.Region),
		Namer: launcher, Now: time.Now})
	return func(ctx context.Context, runID string) (string, error) {
		rep, err := r.Run(ctx, runID) // one pass
		detail := fmt.Sprintf("lease %t, registered %d, initialized %d, handed over %d, joining %d, deferred %d, errors %d%s %v",
			rep.Lease, rep.Registered, rep.Initialized, rep.HandedOver, rep.Joining, rep.Deferred, len(rep.Errors), firstError(rep.Errors), rep.Skipped)
		if err == nil && !rep.Lease {
			return detail, fmt.Errorf("the lifecycle lease was held elsewhere")
		}
		return detail, err
	}, nil
}

func wireDisruption(p parts) (invocation, error) {
	prices, err := pricing.NewProvider(p.cfg.Region)
	if err != nil {
		return nil, err
	}
	recorder := kube.NewRecorder(p.client, kube.RecorderOptions{Instance: "disruption"})
	prov, err := provisioning.NewOnAWS(provisioning.AWSParts{Config: p.cfg, Cluster: p.cluster, Client: p.client, Store: p.store,
		Prices: prices, SpotPrices: p.storedPrices(prices), Events: recorder})
	if err != nil {
		return nil, err
	}
	r := disruptionrun.New(disruptionrun.Config{}, disruptionrun.Deps{
		Store: p.store, Cluster: kube.NewSnapshotter(p.client, kube.SnapshotOptions{}), Launcher: disruptionrun.ProvisionerLauncher{P: prov},
		Nodes: kube.NewActions(p.client), Terminations: termination.NewSender(sqs.NewFromConfig(p.cfg), p.queues.Queues.Termination),
		Events: recorder, Now: time.Now})
	return func(ctx context.Context, runID string) (string, error) {
		rep, err := r.Run(ctx, runID)
		detail := fmt.Sprintf("lease %t, advanced %d, commands %d, rejected %d, eligible %v, budget-blocked %v, evaluation %s, skipped %q, errors %d",
			rep.Lease, len(rep.Advanced), len(rep.Commands), len(rep.Rejected), rep.EligibleNodes, rep.BudgetBlocked, rep.Evaluation.Round(time.Millisecond),
			rep.Skipped, len(rep.Errors)) + firstError(rep.Errors)
		if err == nil && !rep.Lease {
			return detail, fmt.Errorf("the disruption lease was held elsewhere")
		}
		return detail, err
	}, nil
}

func wireTermination(p parts, payload Payload) (invocation, error) {
	messages := sqs.NewFromConfig(p.cfg)
	s := termination.NewService(termination.Config{QueueURL: p.queues.Queues.Termination, ProvisioningQueueURL: p.queues.Queues.Provisioning,
		DisruptionQueueURL: p.queues.Queues.DisruptionWake, ClusterName: Cluster, Log: p.log}, termination.Deps{
		Store: p.store, Kube: p.client, Actions: kube.NewActions(p.client), Instances: instance.New(ec2.NewFromConfig(p.cfg), Cluster),
		Events: kube.NewRecorder(p.client, kube.RecorderOptions{Instance: "termination"}), Queue: messages, Visibility: messages, Now: time.Now})
	return func(ctx context.Context, runID string) (string, error) {
		resp, stats := s.Handle(ctx, sqsEvent(payload.Messages, "termination"))
		return fmt.Sprintf("evictions %v, pods drained %v, drained %v, terminated %d, redriven %d; %d batch failures", stats.Evictions,
			stats.PodsDrained, stats.Drained, len(stats.Terminated), stats.Redriven, len(resp.BatchItemFailures)), nil
	}, nil
}

func wireInterruption(p parts, payload Payload) (invocation, error) {
	queue := sqs.NewFromConfig(p.cfg)
	launcher := instance.New(ec2.NewFromConfig(p.cfg), Cluster)
	s := interruption.NewService(interruption.ServiceConfig{ClusterName: Cluster, ProvisioningQueueURL: p.queues.Queues.Provisioning,
		TerminationQueueURL: p.queues.Queues.Termination}, interruption.ServiceDeps{
		State: p.store, Instances: launcher, Reasons: launcher, Nodes: kube.NewActions(p.client),
		Events: kube.NewRecorder(p.client, kube.RecorderOptions{Instance: "interruption"}), Queue: queue, Visibility: queue,
		Log: p.log, Now: time.Now})
	return func(ctx context.Context, runID string) (string, error) {
		resp, stats := s.Handle(ctx, sqsEvent(payload.Messages, "interruption"))
		return fmt.Sprintf("received %v, acknowledged %d, failed %d, retries %d, disrupted %d; %d batch failures", stats.Received,
			stats.Acknowledged, stats.Failed, stats.Retries, len(stats.Disrupted), len(resp.BatchItemFailures)), nil
	}, nil
}

// sqsEvent is a batch of bodies as Lambda's event source mapping delivers it.
func sqsEvent(bodies []string, queue string) events.SQSEvent {
	var ev events.SQSEvent
	now := fmt.Sprint(time.Now().UnixMilli())
	for i, b := range bodies {
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: fmt.Sprintf("%s-%d-%s", queue, i, now), ReceiptHandle: fmt.Sprintf("rh-%d", i), Body: b,
			Attributes:     map[string]string{"ApproximateReceiveCount": "1", "SentTimestamp": now},
			EventSourceARN: "arn:aws:sqs:us-east-1:123456789012:" + Cluster + "-" + queue, EventSource: "aws:sqs", AWSRegion: "us-east-1"})
	}
	return ev
}

// firstError is ` (first: <error>)` for a report's errors, so a run's log line says what went wrong.
func firstError(errs []string) string {
	if len(errs) == 0 {
		return ""
	}
	return " (first: " + errs[0] + ")"
}
