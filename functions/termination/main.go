// Command termination is the Lambda behind the termination queue: it drains a claim's Node in
// Karpenter's tiers (PDB-aware, bounded by the NodePool's terminationGracePeriod and any spot deadline),
// then terminates the instance, deletes the Node and marks the claim deleted, re-driving each unfinished
// request with a delay.
//
// Environment: NODEWRIGHT_CLUSTER_NAME, NODEWRIGHT_STATE_TABLE and NODEWRIGHT_TERMINATION_QUEUE_URL
// (required); NODEWRIGHT_PROVISIONING_QUEUE_URL (the provisioner's queue, woken when a drain starts so
// its replacement is launched at once; unset, the drain waits for the provisioner's schedule);
// NODEWRIGHT_DISRUPTION_QUEUE_URL (the disruption function's wake queue, sent one message per removed
// claim so consolidation's next step does not wait for its schedule; unset, nothing is sent);
// NODEWRIGHT_CLUSTER_ENDPOINT and NODEWRIGHT_CLUSTER_CA (read from EKS DescribeCluster when
// unset).
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
	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/mirror"
	"github.com/nodewright/nodewright/shared/flows/runmetrics"
	"github.com/nodewright/nodewright/shared/flows/termination"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := build(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "termination:", err)
		os.Exit(1)
	}
	log := lambdacontext.NewLogger()
	cluster := os.Getenv(kube.EnvClusterName)
	lambda.Start(handler(s, func(stats termination.BatchStats) {
		if err := runmetrics.Termination(os.Stdout, cluster, stats, time.Now()); err != nil {
			log.Error("writing termination metrics", "error", err.Error())
		}
	}))
}

// build wires the termination service from the environment; only start-up failures end the process.
func build(ctx context.Context) (*termination.Service, error) {
	env, err := connect.Load(ctx, os.Getenv, connect.Spec{Require: []string{"NODEWRIGHT_TERMINATION_QUEUE_URL"},
		Kube: true, Store: &connect.Store{}})
	if err != nil {
		return nil, err
	}
	name, cfg := env.Cluster.Name, env.AWS
	messages := sqs.NewFromConfig(cfg)
	// The NodeClaim mirrors of the claims a request drains or terminates follow within seconds.
	mirrors, err := mirror.NewClaimFollower(env.REST, "nodewright-termination")
	if err != nil {
		return nil, err
	}
	return termination.NewService(termination.Config{QueueURL: env.Var("NODEWRIGHT_TERMINATION_QUEUE_URL"),
		ProvisioningQueueURL: env.Var("NODEWRIGHT_PROVISIONING_QUEUE_URL"),
		DisruptionQueueURL:   env.Var("NODEWRIGHT_DISRUPTION_QUEUE_URL"),
		ClusterName:          name, Log: lambdacontext.NewLogger()}, termination.Deps{
		Store:      env.Store,
		Kube:       env.Kube,
		Actions:    kube.NewActions(env.Kube),
		Instances:  instance.New(ec2.NewFromConfig(cfg), name),
		Events:     kube.NewRecorder(env.Kube, kube.RecorderOptions{Instance: os.Getenv("AWS_LAMBDA_FUNCTION_NAME")}),
		Queue:      messages,
		Visibility: messages,
		Mirrors:    mirrors,
		Now:        time.Now,
	}), nil
}
