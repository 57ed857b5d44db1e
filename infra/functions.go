package main

import (
	"path/filepath"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"

	"github.com/nodewright/nodewright/shared/core/sizing"
)

// GoFunction is one of Nodewright's Lambda functions: the bootstrap `make build` wrote to
// <functionsDir>/<name>/bootstrap, on provided.al2023 arm64, with its own log group and a role that may
// write only to that log group until its construct grants more. Its environment always carries GOMEMLIMIT,
// 90% of its memory (sizing.Size.GoMemLimit), so the Go collector works harder before Lambda's hard limit.
type GoFunction struct {
	constructs.Construct
	Function awslambda.Function
	Role     awsiam.Role
	// Reserved is the function's reserved concurrency (0: none).
	Reserved float64
}

// GoFunctionProps configures a GoFunction.
type GoFunctionProps struct {
	Name         string // the folder under functions/ and dist/
	FunctionsDir string
	Environment  map[string]*string
	Timeout      awscdk.Duration
	MemoryMB     float64
	// ReservedConcurrency guarantees and caps concurrent executions when above 0 (see concurrency.go).
	ReservedConcurrency float64
}

// NewGoFunction creates the function.
func NewGoFunction(scope constructs.Construct, id string, p GoFunctionProps) *GoFunction {
	c := constructs.NewConstruct(scope, jsii.String(id))
	logs := awslogs.NewLogGroup(c, jsii.String("Logs"), &awslogs.LogGroupProps{
		Retention:     awslogs.RetentionDays_ONE_MONTH,
		RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
	})
	role := awsiam.NewRole(c, jsii.String("Role"), &awsiam.RoleProps{
		AssumedBy:   awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil),
		Description: jsii.String("Nodewright " + p.Name + " function"),
	})
	role.AddToPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("logs:CreateLogStream", "logs:PutLogEvents"),
		Resources: jsii.Strings(*logs.LogGroupArn() + ":*"),
	}))
	cdknag.NagSuppressions_AddResourceSuppressions(role, &[]*cdknag.NagPackSuppression{{
		Id:        jsii.String("AwsSolutions-IAM5"),
		Reason:    jsii.String("The only wildcard is the log streams of this function's own log group, which Lambda names per execution environment."),
		AppliesTo: &[]interface{}{&cdknag.RegexAppliesTo{Regex: jsii.String(`/^Resource::<.*Logs[0-9A-F]{8}\.Arn>:\*$/`)}},
	}}, jsii.Bool(true))
	env := make(map[string]*string, len(p.Environment)+1)
	for k, v := range p.Environment {
		env[k] = v
	}
	env["GOMEMLIMIT"] = jsii.String(sizing.Size{MemoryMB: int(p.MemoryMB)}.GoMemLimit())
	var reserved *float64
	if p.ReservedConcurrency > 0 {
		reserved = jsii.Number(p.ReservedConcurrency)
	}
	fn := awslambda.NewFunction(c, jsii.String("Function"), &awslambda.FunctionProps{
		Runtime:                      awslambda.Runtime_PROVIDED_AL2023(),
		Architecture:                 awslambda.Architecture_ARM_64(),
		Handler:                      jsii.String("bootstrap"),
		Code:                         awslambda.Code_FromAsset(jsii.String(filepath.Join(p.FunctionsDir, p.Name)), nil),
		Environment:                  &env,
		Timeout:                      p.Timeout,
		MemorySize:                   jsii.Number(p.MemoryMB),
		LogGroup:                     logs,
		Role:                         role,
		ReservedConcurrentExecutions: reserved,
	})
	return &GoFunction{Construct: c, Function: fn, Role: role, Reserved: p.ReservedConcurrency}
}
