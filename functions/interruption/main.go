// Command interruption is the Lambda behind the interruption queue: EventBridge spot interruption
// warnings, rebalance recommendations, scheduled health changes, instance state changes and capacity
// reservation interruptions. It launches replacement capacity first and then hands the drain to the
// termination queue (shared/flows/interruption).
//
// Environment: NODEWRIGHT_CLUSTER_NAME, NODEWRIGHT_STATE_TABLE, NODEWRIGHT_PROVISIONING_QUEUE_URL and
// NODEWRIGHT_TERMINATION_QUEUE_URL (required); NODEWRIGHT_REBALANCE_POLICY ("event", the default, or
// "replace"); NODEWRIGHT_CLUSTER_ENDPOINT and NODEWRIGHT_CLUSTER_CA (read from EKS DescribeCluster when
// unset).
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/nodewright/nodewright/shared/adapters/connect"
	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/mirror"
	"github.com/nodewright/nodewright/shared/flows/interruption"
	"github.com/nodewright/nodewright/shared/flows/runmetrics"
)

func main() {
	log := lambdacontext.NewLogger()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	svc, err := build(ctx, log)
	if err != nil {
		fmt.Fprintln(os.Stderr, "interruption:", err)
		os.Exit(1)
	}
	cluster := os.Getenv("NODEWRIGHT_CLUSTER_NAME")
	lambda.Start(handler(svc, func(stats interruption.BatchStats) {
		if err := runmetrics.Interruption(os.Stdout, cluster, stats, time.Now()); err != nil {
			log.Error("writing interruption metrics", "error", err.Error())
		}
	}))
}

// settings is the function's configuration from the environment.
type settings struct {
	cluster, table, provisioningURL, terminationURL string
	rebalance                                       interruption.RebalancePolicy
}

// readSettings reads and checks the environment; the error names the variable that is wrong.
func readSettings(getenv func(string) string) (settings, error) {
	s := settings{cluster: getenv("NODEWRIGHT_CLUSTER_NAME"), table: getenv("NODEWRIGHT_STATE_TABLE"),
		provisioningURL: getenv("NODEWRIGHT_PROVISIONING_QUEUE_URL"), terminationURL: getenv("NODEWRIGHT_TERMINATION_QUEUE_URL")}
	for _, v := range []struct{ name, value string }{
		{"NODEWRIGHT_CLUSTER_NAME", s.cluster}, {"NODEWRIGHT_STATE_TABLE", s.table},
		{"NODEWRIGHT_PROVISIONING_QUEUE_URL", s.provisioningURL}, {"NODEWRIGHT_TERMINATION_QUEUE_URL", s.terminationURL},
	} {
		if v.value == "" {
			return settings{}, fmt.Errorf("%s is required", v.name)
		}
	}
	policy, err := interruption.ParseRebalancePolicy(getenv("NODEWRIGHT_REBALANCE_POLICY"))
	if err != nil {
		return settings{}, fmt.Errorf("NODEWRIGHT_REBALANCE_POLICY: %w", err)
	}
	s.rebalance = policy
	return s, nil
}

// build wires the service from the environment; only start-up failures end the process.
func build(ctx context.Context, log *slog.Logger) (*interruption.Service, error) {
	s, err := readSettings(os.Getenv)
	if err != nil {
		return nil, err
	}
	// The variables readSettings checked; connect also finds the cluster and connects to it.
	env, err := connect.Load(ctx, os.Getenv, connect.Spec{Kube: true, Store: &connect.Store{}})
	if err != nil {
		return nil, err
	}
	cfg, client := env.AWS, env.Kube
	queue := sqs.NewFromConfig(cfg)
	// The NodeClaim mirrors of the claims a notice hands to termination follow within seconds.
	mirrors, err := mirror.NewClaimFollower(env.REST, "nodewright-interruption")
	if err != nil {
		return nil, err
	}
	launcher := instance.New(ec2.NewFromConfig(cfg), s.cluster)
	// Events on a claim go on its NodeClaim mirror too, with the UID of a bounded, cached metadata GET (the
	// follower's get on nodeclaims.nodewright.sh).
	events, err := mirror.NewConfigClaimEvents(env.REST, kube.NewRecorder(client, kube.RecorderOptions{Instance: os.Getenv("AWS_LAMBDA_FUNCTION_NAME")}), nil)
	if err != nil {
		return nil, err
	}
	return interruption.NewService(interruption.ServiceConfig{ClusterName: s.cluster,
		ProvisioningQueueURL: s.provisioningURL, TerminationQueueURL: s.terminationURL, Rebalance: s.rebalance,
	}, interruption.ServiceDeps{
		State:      env.Store,
		Instances:  launcher,
		Reasons:    launcher,
		Nodes:      kube.NewActions(client),
		Events:     events,
		Queue:      queue,
		Visibility: queue,
		Log:        log,
		Mirrors:    mirrors,
		Now:        time.Now,
	}), nil
}
