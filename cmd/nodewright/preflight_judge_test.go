package main

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
)

// healthy is a cluster and account on which a default deployment works.
func healthy() (clusterFacts, accountFacts, preflightSettings) {
	c := clusterFacts{Name: "prod", Status: "ACTIVE", Version: "1.33", PublicAccess: true, AuthenticationMode: "API", IPFamily: "ipv4",
		VpcID: "vpc-1", SubnetIDs: []string{"subnet-0aaaaaaaaaaaaaaaa", "subnet-0bbbbbbbbbbbbbbbb"}, ClusterSecurityGroup: "sg-0cccccccccccccccc"}
	a := accountFacts{Region: "eu-west-1", UnreservedConcurrency: 1000, SpotRole: true, AccessGroups: map[string]bool{}}
	return c, a, preflightSettings{PendingPodWebhook: true}
}

// itemOf is the finding for one item.
func itemOf(t *testing.T, fs []finding, item string) finding {
	t.Helper()
	for _, f := range fs {
		if f.Item == item {
			return f
		}
	}
	t.Fatalf("no finding for %q", item)
	return finding{}
}

// TestPreflightJudgesEachItem: each rule's verdict and the -c value it names, from facts as read.
func TestPreflightJudgesEachItem(t *testing.T) {
	inVPC := func(s *preflightSettings) {
		s.SubnetIDs, s.SecurityGroupIDs = []string{"subnet-0aaaaaaaaaaaaaaaa"}, []string{"sg-0cccccccccccccccc"}
	}
	tests := []struct {
		name    string
		change  func(*clusterFacts, *accountFacts, *preflightSettings)
		item    string
		verdict verdict
		detail  string
		set     []string
	}{
		{"an open public endpoint", nil, "API endpoint", works, "open to all addresses", nil},
		{"a public endpoint limited by CIDRs, functions outside the VPC", func(c *clusterFacts, _ *accountFacts, _ *preflightSettings) {
			c.PublicAccessCIDRs = []string{"198.51.100.0/24"}
		}, "API endpoint", willNotWork, "enable private endpoint access too",
			[]string{"vpcSubnetIds=subnet-0aaaaaaaaaaaaaaaa,subnet-0bbbbbbbbbbbbbbbb", "vpcSecurityGroupIds=sg-0cccccccccccccccc"}},
		{"0.0.0.0/0 among the CIDRs is open", func(c *clusterFacts, _ *accountFacts, _ *preflightSettings) {
			c.PublicAccessCIDRs = []string{"198.51.100.0/24", "0.0.0.0/0"}
		}, "API endpoint", works, "open to all addresses", nil},
		{"a public-only endpoint from the VPC goes through NAT", func(c *clusterFacts, _ *accountFacts, s *preflightSettings) { inVPC(s) },
			"API endpoint", warning, "NAT gateway", nil},
		{"a public-only endpoint from isolated subnets", func(c *clusterFacts, _ *accountFacts, s *preflightSettings) {
			inVPC(s)
			s.IsolatedVPC, s.VPCEndpoints = true, true
		}, "API endpoint", willNotWork, "isolated subnets have no route", nil},
		{"security groups without subnets", func(_ *clusterFacts, _ *accountFacts, s *preflightSettings) {
			s.SecurityGroupIDs = []string{"sg-0cccccccccccccccc"}
		}, "VPC settings", willNotWork, "only with vpcSubnetIds",
			[]string{"vpcSubnetIds=subnet-0aaaaaaaaaaaaaaaa,subnet-0bbbbbbbbbbbbbbbb", "vpcSecurityGroupIds=sg-0cccccccccccccccc"}},
		{"subnets without security groups", func(_ *clusterFacts, _ *accountFacts, s *preflightSettings) {
			s.SubnetIDs = []string{"subnet-0aaaaaaaaaaaaaaaa"}
		}, "VPC settings", willNotWork, "needs vpcSecurityGroupIds", []string{"vpcSecurityGroupIds=sg-0cccccccccccccccc"}},
		{"isolated subnets without endpoints", func(c *clusterFacts, a *accountFacts, s *preflightSettings) {
			inVPC(s)
			s.IsolatedVPC = true
			c.PrivateAccess = true
			a.VPC = vpcFacts{SubnetVPC: map[string]string{"subnet-0aaaaaaaaaaaaaaaa": "vpc-1"}, GroupVPC: map[string]string{"sg-0cccccccccccccccc": "vpc-1"}}
		}, "VPC settings", warning, "need VPC endpoints", []string{"vpcEndpoints=true"}},
		{"CONFIG_MAP authentication", func(c *clusterFacts, _ *accountFacts, _ *preflightSettings) { c.AuthenticationMode = "CONFIG_MAP" },
			"authentication mode", willNotWork, "authenticationMode=API_AND_CONFIG_MAP", nil},
		{"API_AND_CONFIG_MAP authentication", func(c *clusterFacts, _ *accountFacts, _ *preflightSettings) {
			c.AuthenticationMode = "API_AND_CONFIG_MAP"
		},
			"authentication mode", works, "API_AND_CONFIG_MAP", nil},
		{"ipv6", func(c *clusterFacts, _ *accountFacts, _ *preflightSettings) { c.IPFamily = "ipv6" }, "IP family", works, "ipv6", nil},
		{"1.29", func(c *clusterFacts, _ *accountFacts, _ *preflightSettings) { c.Version = "1.29" }, "Kubernetes version", willNotWork, "matchConditions", nil},
		{"1.30", func(c *clusterFacts, _ *accountFacts, _ *preflightSettings) { c.Version = "1.30" }, "Kubernetes version", warning, "etcd", nil},
		{"1.35", func(c *clusterFacts, _ *accountFacts, _ *preflightSettings) { c.Version = "1.35" }, "Kubernetes version", warning, "newer than", nil},
		{"CUSTOMER_ROUTED egress with the webhook", func(c *clusterFacts, _ *accountFacts, _ *preflightSettings) { c.EgressMode = "CUSTOMER_ROUTED" },
			"control-plane egress", warning, "one-minute backstop", []string{"pendingPodWebhook=false"}},
		{"CUSTOMER_ROUTED egress without the webhook", func(c *clusterFacts, _ *accountFacts, s *preflightSettings) {
			c.EgressMode, s.PendingPodWebhook = "CUSTOMER_ROUTED", false
		}, "control-plane egress", works, "no webhook is deployed", nil},
		{"CUSTOMER_ISOLATED egress with the webhook", func(c *clusterFacts, _ *accountFacts, _ *preflightSettings) { c.EgressMode = "CUSTOMER_ISOLATED" },
			"control-plane egress", warning, "no route to the Function URL", []string{"pendingPodWebhook=false"}},
		{"no Function URLs in the region", func(_ *clusterFacts, a *accountFacts, _ *preflightSettings) { a.Region = "eu-central-2" },
			"Function URLs", willNotWork, "eu-central-2 has no Lambda Function URLs", []string{"pendingPodWebhook=false"}},
		{"no Function URLs, no webhook", func(_ *clusterFacts, a *accountFacts, s *preflightSettings) {
			a.Region, s.PendingPodWebhook = "eu-central-2", false
		},
			"Function URLs", works, "not needed", nil},
		{"a new account's 10 executions", func(_ *clusterFacts, a *accountFacts, _ *preflightSettings) { a.UnreservedConcurrency = 10 },
			"Lambda concurrency", willNotWork, "by 218", nil},
		{"room for the workers only", func(_ *clusterFacts, a *accountFacts, _ *preflightSettings) { a.UnreservedConcurrency = 200 },
			"Lambda concurrency", willNotWork, "by 28, or leave out the webhook's 100", []string{"pendingPodWebhook=false"}},
		{"room for the workers, no webhook", func(_ *clusterFacts, a *accountFacts, s *preflightSettings) {
			a.UnreservedConcurrency, s.PendingPodWebhook = 200, false
		},
			"Lambda concurrency", works, "reserves 28, leaving 172", nil},
		{"concurrency unreadable", func(_ *clusterFacts, a *accountFacts, _ *preflightSettings) {
			a.ConcurrencyErr = errors.New("AccessDenied")
		},
			"Lambda concurrency", notChecked, "AccessDenied", nil},
		{"no spot role", func(_ *clusterFacts, a *accountFacts, _ *preflightSettings) { a.SpotRole = false },
			"spot service-linked role", warning, "create-service-linked-role --aws-service-name spot.amazonaws.com", nil},
		{"some access entries missing", func(_ *clusterFacts, a *accountFacts, _ *preflightSettings) {
			a.AccessGroups = map[string]bool{"nodewright:provisioner": true}
		}, "access entries", willNotWork, "nodewright:disruption, nodewright:interruption, nodewright:lifecycle, nodewright:termination", nil},
		{"entries not readable under CONFIG_MAP", func(_ *clusterFacts, a *accountFacts, _ *preflightSettings) {
			a.AccessNotChecked = "the authentication mode CONFIG_MAP has no access entries"
		}, "access entries", notChecked, "CONFIG_MAP", nil},
		{"a cluster being created", func(c *clusterFacts, _ *accountFacts, _ *preflightSettings) { c.Status = "CREATING" },
			"cluster", willNotWork, "need an ACTIVE cluster", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, a, s := healthy()
			if tt.change != nil {
				tt.change(&c, &a, &s)
			}
			f := itemOf(t, judge(c, a, s), tt.item)
			assert.Equal(t, tt.verdict, f.Verdict, f.Detail)
			assert.Contains(t, f.Detail, tt.detail)
			assert.Equal(t, tt.set, f.Set)
		})
	}
}

// TestPreflightDeployedStackHasItsConcurrency: once every function's access entry exists the stack is
// deployed, and its reservations are already out of the unreserved count.
func TestPreflightDeployedStackHasItsConcurrency(t *testing.T) {
	c, a, s := healthy()
	a.UnreservedConcurrency = 150
	for _, g := range []string{"nodewright:provisioner", "nodewright:disruption", "nodewright:interruption", "nodewright:lifecycle", "nodewright:termination"} {
		a.AccessGroups[g] = true
	}
	fs := judge(c, a, s)
	assert.Equal(t, works, itemOf(t, fs, "Lambda concurrency").Verdict)
	assert.Equal(t, works, itemOf(t, fs, "access entries").Verdict)
	for _, f := range fs {
		assert.Equal(t, works, f.Verdict, "%s: %s", f.Item, f.Detail)
	}
}
