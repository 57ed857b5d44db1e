package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/stretchr/testify/assert"
)

// TestPreflightRefusesBadFlagsAndValues: each bad flag or context value is a usage error (exit 2) that
// names the flag or key, before any AWS configuration is loaded.
func TestPreflightRefusesBadFlagsAndValues(t *testing.T) {
	saved := loadAWSConfig
	t.Cleanup(func() { loadAWSConfig = saved })
	loaded := false
	loadAWSConfig = func(context.Context, string) (aws.Config, error) {
		loaded = true
		return aws.Config{}, nil
	}
	ok := []string{"--cluster", "prod", "--region", "eu-west-1"}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--region", "eu-west-1"}, "--cluster is required"},
		{[]string{"--cluster", "prod"}, "--region is required"},
		{[]string{"--cluster", "-bad name", "--region", "eu-west-1"}, `--cluster "-bad name" is not an EKS cluster name`},
		{[]string{"--cluster", "prod", "--region", "Europe"}, `--region "Europe" is not an AWS region name`},
		{append(ok, "extra"), `unexpected arguments ["extra"]`},
		{append(ok, "-c", "vpcSubnetIds"), `invalid value "vpcSubnetIds" for flag -c: want KEY=VALUE`},
		{append(ok, "-c", "vpcSubnets=subnet-0aaaaaaaaaaaaaaaa"), `unknown context value "vpcSubnets": the CDK app reads account, alarmTopicArn`},
		{append(ok, "-c", "vpcSubnetIds=subnet-0aaaaaaaaaaaaaaaa,vpc-1"), `-c vpcSubnetIds=subnet-0aaaaaaaaaaaaaaaa,vpc-1: "vpc-1" is not an id like subnet-`},
		{append(ok, "-c", "vpcSecurityGroupIds=default"), `-c vpcSecurityGroupIds=default: "default" is not an id like sg-`},
		{append(ok, "-c", "pendingPodWebhook=off"), "-c pendingPodWebhook=off: want true or false"},
		{append(ok, "-c", "isolatedVPC=yes"), "-c isolatedVPC=yes: want true or false"},
		{append(ok, "-c", "vpcEndpoints=1"), "-c vpcEndpoints=1: want true or false"},
		{append(ok, "-c", "region=us-east-1"), "-c region=us-east-1 differs from --region eu-west-1"},
		{append(ok, "-c", "clusterName=staging"), "-c clusterName=staging differs from --cluster prod"},
		{append(ok, "--endpoint"), "flag provided but not defined: -endpoint"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := dispatch(append([]string{"preflight"}, tt.args...), strings.NewReader(""), &out, &errOut)
			assert.Equal(t, 2, code)
			assert.Contains(t, errOut.String(), tt.want)
			assert.Contains(t, errOut.String(), "Usage: nodewright preflight --cluster NAME --region REGION")
			assert.Empty(t, out.String())
			assert.False(t, loaded, "no AWS configuration is loaded")
		})
	}
}
