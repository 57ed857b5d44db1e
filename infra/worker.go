package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/nodewright/nodewright/shared/core/sizing"
)

// WorkerProps is what every function that works on the cluster's state shares.
type WorkerProps struct {
	ClusterName  string
	FunctionsDir string
	Table        awsdynamodb.ITable
	// Sizes is each function's memory for the cluster's size (StackProps.Sizes); nil is the default tier.
	Sizes map[string]sizing.Size
	// VPC places every worker (each calls the API server) in the cluster's VPC when it names subnets;
	// Endpoints are the VPC endpoints the workers reach AWS through (nil: none created).
	VPC       VPCPlacement
	Endpoints *VPCEndpoints
}

// sizeOf is fn's size in sizes, or in the default tier when sizes does not name it.
func sizeOf(sizes map[string]sizing.Size, fn string) sizing.Size {
	if s, ok := sizes[fn]; ok {
		return s
	}
	defaults, err := sizing.For(sizing.DefaultClusterPods)
	if err != nil {
		panic(err) // the default is within the tiers by construction
	}
	return defaults[fn]
}

// workerSpec is one worker function's shape.
type workerSpec struct {
	name        string
	timeout     awscdk.Duration
	reserved    float64
	extraEnv    map[string]*string
	stateAccess []string // DynamoDB actions on the state table and its indexes
	// prices is whether the function prices instances (it then learns whether it runs in an isolated VPC).
	prices bool
}

// EnvIsolatedVPC is the variable that tells a pricing function it runs without internet access
// (pricing.EnvIsolatedVPC; not imported, so the CDK app does not build the functions' dependencies).
const EnvIsolatedVPC = "NODEWRIGHT_ISOLATED_VPC"

// newWorker creates a GoFunction sized by p.Sizes for spec.name, with NODEWRIGHT_CLUSTER_NAME and NODEWRIGHT_STATE_TABLE (plus
// spec.extraEnv, the endpoints' settings, and EnvIsolatedVPC for a pricing function in an isolated VPC),
// the state-table actions of spec, and eks:DescribeCluster on the cluster, placed in p.VPC.
func newWorker(scope constructs.Construct, id string, p WorkerProps, spec workerSpec) *GoFunction {
	env := map[string]*string{
		"NODEWRIGHT_CLUSTER_NAME": jsii.String(p.ClusterName),
		"NODEWRIGHT_STATE_TABLE":  p.Table.TableName(),
	}
	for k, v := range spec.extraEnv {
		env[k] = v
	}
	for k, v := range p.Endpoints.env() {
		env[k] = v
	}
	if spec.prices && p.VPC.Isolated {
		env[EnvIsolatedVPC] = jsii.String("true")
	}
	fn := NewGoFunction(scope, id, GoFunctionProps{
		Name: spec.name, FunctionsDir: p.FunctionsDir, Environment: env,
		Timeout: spec.timeout, MemoryMB: float64(sizeOf(p.Sizes, spec.name).MemoryMB), ReservedConcurrency: spec.reserved,
	})
	allowState(fn.Role, p.Table, spec.stateAccess...)
	allowDescribeCluster(fn.Role, p.ClusterName)
	placeInVPC(fn, p.VPC)
	return fn
}
