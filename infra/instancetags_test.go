package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/testsupport/awscalls"
)

// tagContext is the condition keys of a request that tags with request and acts on a resource tagged
// resource (either may be nil).
func tagContext(request, resource map[string]string) map[string][]string {
	ctx := map[string][]string{}
	for k, v := range request {
		ctx["aws:RequestTag/"+k] = []string{v}
		ctx["aws:TagKeys"] = append(ctx["aws:TagKeys"], k)
	}
	for k, v := range resource {
		ctx["aws:ResourceTag/"+k] = []string{v}
	}
	return ctx
}

// The roles allow exactly the EC2 tagging that item 10 of issue #27 needs: launches (provisioner and
// disruption) may tag what they create with karpenter.sh/nodepool but never with the keys that would let
// Karpenter's garbage collection take Nodewright's instances or templates; the lifecycle may add the Name
// tag, only that key, only on the cluster's own instances; no other function may.
func TestRolesAllowTheCostAllocationTagsAndNothingKarpenterCollectsBy(t *testing.T) {
	template, _ := synth(t)
	cfn := toCfn(t, template)
	env := cfnEnv{Region: "us-east-1", Account: "123456789012"}
	policy := func(rolePrefix string) []awscalls.Statement {
		stmts, err := policyStatements(cfn.statements(t, rolePrefix), env)
		require.NoError(t, err, rolePrefix)
		return stmts
	}
	arn := func(kind, id string) string { return "arn:aws:ec2:us-east-1:123456789012:" + kind + "/" + id }
	launched := map[string]string{instance.TagCluster: "unit", instance.ClusterTagKey("unit"): "owned",
		instance.TagNodePool: "default", instance.TagNodeClass: "default", instance.TagNodeClaim: "default-abcde",
		instance.KarpenterTagNodePool: "default"}
	with := func(k, v string) map[string]string {
		out := map[string]string{k: v}
		for key, val := range launched {
			out[key] = val
		}
		return out
	}

	t.Run("launches tag their NodePool, never Karpenter's ownership keys", func(t *testing.T) {
		for _, role := range []string{"ProvisionerHandlerRole", "DisruptionHandlerRole"} {
			stmts := policy(role)
			for _, action := range []string{"ec2:CreateFleet", "ec2:RunInstances"} {
				for _, kind := range []string{"instance", "volume", "network-interface"} {
					check := awscalls.Check{Action: action, Resource: arn(kind, "*"), Context: tagContext(launched, nil)}
					got := awscalls.Evaluate(stmts, check)
					assert.True(t, got.Allowed, "%s %s: %s", role, check, got.Reason)
					for _, k := range []string{instance.KarpenterTagNodeClass, instance.TagEKSClusterName, instance.KarpenterTagTemplateCluster} {
						check := awscalls.Check{Action: action, Resource: arn(kind, "*"), Context: tagContext(with(k, "unit"), nil)}
						assert.False(t, awscalls.Evaluate(stmts, check).Allowed, "%s %s", role, check)
					}
				}
			}
			tagOnCreate := tagContext(launched, nil)
			tagOnCreate["ec2:CreateAction"] = []string{"CreateFleet"}
			assert.True(t, awscalls.Evaluate(stmts, awscalls.Check{Action: "ec2:CreateTags", Resource: arn("instance", "*"), Context: tagOnCreate}).Allowed, role)
			tagOnCreate = tagContext(with(instance.KarpenterTagNodeClass, "default"), nil)
			tagOnCreate["ec2:CreateAction"] = []string{"CreateFleet"}
			assert.False(t, awscalls.Evaluate(stmts, awscalls.Check{Action: "ec2:CreateTags", Resource: arn("instance", "*"), Context: tagOnCreate}).Allowed, role)
		}
	})

	own := map[string]string{instance.TagCluster: "unit"}
	name := map[string]string{instance.TagName: "ip-10-0-1-17.ec2.internal"}
	t.Run("the lifecycle names the cluster's own instances, and does nothing else with CreateTags", func(t *testing.T) {
		stmts := policy("LifecycleHandlerRole")
		for _, c := range []struct {
			what     string
			check    awscalls.Check
			resource string
			allowed  bool
		}{
			{"Name on an own instance", awscalls.Check{Context: tagContext(name, own)}, arn("instance", "i-0123456789abcdef0"), true},
			{"Name on another cluster's instance", awscalls.Check{Context: tagContext(name, map[string]string{instance.TagCluster: "other"})},
				arn("instance", "i-0123456789abcdef0"), false},
			{"Name on an instance of no cluster (Karpenter's)", awscalls.Check{Context: tagContext(name, map[string]string{
				instance.ClusterTagKey("unit"): "owned", instance.KarpenterTagNodePool: "default"})}, arn("instance", "i-0123456789abcdef0"), false},
			{"Name and another key", awscalls.Check{Context: tagContext(map[string]string{instance.TagName: "x", "team": "a"}, own)},
				arn("instance", "i-0123456789abcdef0"), false},
			{"Karpenter's node class key", awscalls.Check{Context: tagContext(map[string]string{instance.KarpenterTagNodeClass: "x"}, own)},
				arn("instance", "i-0123456789abcdef0"), false},
			{"Name on an own volume", awscalls.Check{Context: tagContext(name, own)}, arn("volume", "vol-0123456789abcdef0"), false},
		} {
			c.check.Action, c.check.Resource = "ec2:CreateTags", c.resource
			got := awscalls.Evaluate(stmts, c.check)
			assert.Equal(t, c.allowed, got.Allowed, "%s: %s", c.what, got.Reason)
		}
	})

	t.Run("no other function tags instances", func(t *testing.T) {
		for _, role := range []string{"InterruptionHandlerRole", "TerminationHandlerRole", "WebhookHandlerRole"} {
			check := awscalls.Check{Action: "ec2:CreateTags", Resource: arn("instance", "i-0123456789abcdef0"), Context: tagContext(name, own)}
			assert.False(t, awscalls.Evaluate(policy(role), check).Allowed, role)
		}
	})
}
