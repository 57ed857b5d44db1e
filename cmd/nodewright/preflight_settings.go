package main

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// preflightSettings are the CDK app's context values that decide where the functions run and whether the
// pending-pod webhook is deployed, as `nodewright preflight -c key=value` takes them (the same keys and
// spellings as `cdk deploy -c`).
type preflightSettings struct {
	// SubnetIDs and SecurityGroupIDs (vpcSubnetIds, vpcSecurityGroupIds) place the functions that call the
	// API server in the cluster's VPC.
	SubnetIDs        []string
	SecurityGroupIDs []string
	// VPCEndpoints (vpcEndpoints) creates the VPC endpoints the functions need in subnets without NAT;
	// IsolatedVPC (isolatedVPC) is for subnets without any route out.
	VPCEndpoints bool
	IsolatedVPC  bool
	// PendingPodWebhook (pendingPodWebhook, default true) deploys the webhook behind a Function URL.
	PendingPodWebhook bool
}

// The context keys preflight judges.
const (
	ctxSubnets        = "vpcSubnetIds"
	ctxSecurityGroups = "vpcSecurityGroupIds"
	ctxEndpoints      = "vpcEndpoints"
	ctxIsolated       = "isolatedVPC"
	ctxWebhook        = "pendingPodWebhook"
)

// otherContextKeys are the CDK app's other context values: accepted, so one -c list serves both
// commands, but they change nothing preflight checks.
var otherContextKeys = map[string]bool{
	"clusterName": true, "manifests": true, "rebalancePolicy": true,
	"clusterPods": true, "functionsDir": true, "alarmTopicArn": true, "account": true, "region": true,
	// Karpenter's settings and feature gates (infra's settingsFromContext).
	"minValuesPolicy": true, "preferencePolicy": true, "vmMemoryOverheadPercent": true, "reservedENIs": true,
	"batchIdleDuration": true, "batchMaxDuration": true, "featureGates": true,
}

var (
	// clusterNamePattern is EKS's rule for cluster names (as infra's); regionPattern an AWS region name.
	clusterNamePattern     = regexp.MustCompile(`^[0-9A-Za-z][A-Za-z0-9\-_]{0,99}$`)
	regionPattern          = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-\d+$`)
	subnetIDPattern        = regexp.MustCompile(`^subnet-[0-9a-f]{8,17}$`)
	securityGroupIDPattern = regexp.MustCompile(`^sg-[0-9a-f]{8,17}$`)
)

// contextFlag is the repeatable -c key=value flag; each value is kept as written, the last one for a key
// winning, as with the CDK CLI.
type contextFlag map[string]string

func (c contextFlag) String() string { return fmt.Sprint(map[string]string(c)) }

func (c contextFlag) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || k == "" {
		return fmt.Errorf("want KEY=VALUE, got %q", v)
	}
	if !otherContextKeys[k] && k != ctxSubnets && k != ctxSecurityGroups && k != ctxEndpoints && k != ctxIsolated && k != ctxWebhook {
		keys := []string{ctxSubnets, ctxSecurityGroups, ctxEndpoints, ctxIsolated, ctxWebhook}
		for o := range otherContextKeys {
			keys = append(keys, o)
		}
		sort.Strings(keys)
		return fmt.Errorf("unknown context value %q: the CDK app reads %s", k, strings.Join(keys, ", "))
	}
	c[k] = val
	return nil
}

// settings validates the values preflight judges; an error names the -c key and what it takes.
func (c contextFlag) settings() (preflightSettings, error) {
	s := preflightSettings{PendingPodWebhook: true}
	var err error
	if s.SubnetIDs, err = idList(c, ctxSubnets, subnetIDPattern, "subnet-0123456789abcdef0"); err != nil {
		return s, err
	}
	if s.SecurityGroupIDs, err = idList(c, ctxSecurityGroups, securityGroupIDPattern, "sg-0123456789abcdef0"); err != nil {
		return s, err
	}
	for _, b := range []struct {
		key string
		to  *bool
	}{{ctxEndpoints, &s.VPCEndpoints}, {ctxIsolated, &s.IsolatedVPC}, {ctxWebhook, &s.PendingPodWebhook}} {
		v, set := c[b.key]
		if !set {
			continue
		}
		switch v {
		case "true":
			*b.to = true
		case "false":
			*b.to = false
		default:
			return s, fmt.Errorf("-c %s=%s: want true or false", b.key, v)
		}
	}
	return s, nil
}

// idList reads a comma-separated list of AWS resource ids; unset or empty is none.
func idList(c contextFlag, key string, pattern *regexp.Regexp, example string) ([]string, error) {
	v := c[key]
	if v == "" {
		return nil, nil
	}
	var ids []string
	seen := map[string]bool{}
	for _, id := range strings.Split(v, ",") {
		id = strings.TrimSpace(id)
		if !pattern.MatchString(id) {
			return nil, fmt.Errorf("-c %s=%s: %q is not an id like %s (comma-separated)", key, v, id, example)
		}
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids, nil
}
