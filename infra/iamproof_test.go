//go:build iamproof

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/testsupport/awscalls"
	"github.com/nodewright/nodewright/shared/testsupport/awstest"
)

// functionRoles maps each function to the logical-id prefix of its role in the template.
var functionRoles = map[string]string{
	"provisioner": "ProvisionerHandlerRole", "lifecycle": "LifecycleHandlerRole", "interruption": "InterruptionHandlerRole",
	"termination": "TerminationHandlerRole", "disruption": "DisruptionHandlerRole", "webhook": "WebhookHandlerRole",
}

// TestEveryRecordedCallIsAllowedByItsRole is the IAM proof: every AWS call each function made in the e2e
// tests of this `make test` run (recorded into $NODEWRIGHT_AWS_CALLS) must be allowed by the policy the
// CDK app synthesizes for that function's role, resources and tag conditions included. moto enforces
// none of it. Run by .ci/gotest.sh after the other tests, with -tags iamproof.
func TestEveryRecordedCallIsAllowedByItsRole(t *testing.T) {
	dir := os.Getenv(awscalls.EnvDir)
	require.NotEmpty(t, dir, "%s must name the directory the e2e tests recorded their AWS calls into", awscalls.EnvDir)
	calls, err := awscalls.ReadDir(dir)
	require.NoError(t, err)
	require.NotEmpty(t, calls, "no AWS calls were recorded in %s: the e2e tests did not run with recording on", dir)
	deployments, err := awscalls.ReadDeployments(dir)
	require.NoError(t, err)

	byDeployment := map[string][]awscalls.Call{}
	for _, c := range calls {
		byDeployment[c.Deployment] = append(byDeployment[c.Deployment], c)
	}
	exercised := map[string]map[string]int{} // function → action → checks
	granted := map[string][]awscalls.Statement{}
	denied := map[string]bool{}
	synthesized := map[string]cfnTemplate{}
	for _, id := range sortedKeys(byDeployment) {
		d, ok := deployments[id]
		require.True(t, ok, "calls of deployment %s, which was not recorded", id)
		key := d.Cluster + "\x00" + d.Manifests // the roles depend on these only; synthesizing takes seconds
		cfn, ok := synthesized[key]
		if !ok {
			cfn = synthDeployment(t, d)
			synthesized[key] = cfn
		}
		env := deploymentEnv(t, cfn, d)
		policies := map[string][]awscalls.Statement{}
		for fn, prefix := range functionRoles {
			stmts, err := policyStatements(cfn.statements(t, prefix), env)
			require.NoError(t, err, fn)
			policies[fn], granted[fn] = stmts, append(granted[fn], stmts...)
		}
		t.Logf("deployment %s (cluster %s): %d calls", id, d.Cluster, len(byDeployment[id]))
		for _, c := range byDeployment[id] {
			stmts, ok := policies[c.Function]
			if !ok {
				denied[fmt.Sprintf("%s %s:%s: no such function in the template", c.Function, c.Service, c.Operation)] = true
				continue
			}
			if exercised[c.Function] == nil {
				exercised[c.Function] = map[string]int{}
			}
			for _, ch := range c.Checks {
				exercised[c.Function][ch.Action]++
				if dec := awscalls.Evaluate(stmts, ch); !dec.Allowed {
					denied[fmt.Sprintf("%s %s: %s\n      denied: %s", c.Function, c.Operation, ch, dec.Reason)] = true
				}
			}
		}
	}

	for _, fn := range sortedKeys(functionRoles) {
		actions := exercised[fn]
		var used []string
		for _, a := range sortedKeys(actions) {
			used = append(used, fmt.Sprintf("%s (%d)", a, actions[a]))
		}
		var unused []string
		for _, g := range grantedActions(granted[fn]) {
			if !exercisedBy(g, actions) {
				unused = append(unused, g)
			}
		}
		t.Logf("%s exercised %d actions: %s", fn, len(actions), strings.Join(used, ", "))
		t.Logf("%s granted, never exercised here: %s", fn, strings.Join(unused, ", "))
		if len(actions) == 0 {
			t.Errorf("%s made no recorded AWS call: its e2e tests did not run with recording on, so its role is unproven", fn)
		}
	}
	if len(denied) > 0 {
		list := sorted(denied)
		t.Errorf("%d calls are not allowed by the synthesized roles:\n  %s", len(list), strings.Join(list, "\n  "))
	}
}

// exercisedBy is whether a granted action (possibly a wildcard) was used.
func exercisedBy(granted string, actions map[string]int) bool {
	for a := range actions {
		if awscalls.Evaluate([]awscalls.Statement{{Effect: "Allow", Actions: []string{granted}, Resources: []string{"*"}}},
			awscalls.Check{Action: a, Resource: "*"}).Allowed {
			return true
		}
	}
	return false
}

// synthDeployment synthesizes the stack for a recorded deployment's cluster and configuration.
func synthDeployment(t *testing.T, d awscalls.Deployment) cfnTemplate {
	t.Helper()
	manifests := filepath.Join(t.TempDir(), "manifests.yaml")
	require.NoError(t, os.WriteFile(manifests, []byte(d.Manifests), 0o600))
	app := awscdk.NewApp(&awscdk.AppProps{Context: &map[string]interface{}{"clusterName": d.Cluster, "manifests": manifests,
		"functionsDir": fakeFunctions(t)}})
	props, err := stackPropsFromContext(app)
	require.NoError(t, err)
	stack := NewNodewrightStack(app, props.StackName(), props)
	return toCfn(t, assertions.Template_FromStack(stack.Stack, nil))
}

// deploymentEnv binds the template's state table and work queues to the deployment's.
func deploymentEnv(t *testing.T, cfn cfnTemplate, d awscalls.Deployment) cfnEnv {
	t.Helper()
	region := awstest.DefaultRegion
	env := cfnEnv{Region: region, Account: d.Account, Refs: map[string]string{}, Arns: map[string]string{}}
	tables := cfn.ofType("AWS::DynamoDB::Table")
	require.Len(t, tables, 1, "one state table")
	for id := range tables {
		env.Refs[id] = d.Table
		env.Arns[id] = "arn:aws:dynamodb:" + region + ":" + d.Account + ":table/" + d.Table
	}
	for construct, name := range d.Queues {
		id := exactID(t, cfn, "AWS::SQS::Queue", "Queues"+construct)
		env.Refs[id] = "https://sqs." + region + ".amazonaws.com/" + d.Account + "/" + name
		env.Arns[id] = "arn:aws:sqs:" + region + ":" + d.Account + ":" + name
	}
	if d.WebhookSecret != "" {
		// A secret's Ref is its ARN, which ends in a suffix Secrets Manager draws: match any suffix.
		id := exactID(t, cfn, "AWS::SecretsManager::Secret", "WebhookToken")
		env.Refs[id] = "arn:aws:secretsmanager:" + region + ":" + d.Account + ":secret:" + d.WebhookSecret + "-*"
	}
	return env
}

// exactID is the logical id of the resource whose id is prefix and CDK's 8-character hash.
func exactID(t *testing.T, cfn cfnTemplate, typ, prefix string) string {
	t.Helper()
	for id, r := range cfn {
		if r["Type"] == typ && strings.HasPrefix(id, prefix) && len(id) == len(prefix)+8 {
			return id
		}
	}
	require.Failf(t, "missing resource", "no %s %s<hash>", typ, prefix)
	return ""
}

// grantedActions lists the actions a policy names, sorted.
func grantedActions(stmts []awscalls.Statement) []string {
	set := map[string]bool{}
	for _, s := range stmts {
		if s.Effect == "Allow" {
			for _, a := range s.Actions {
				set[a] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for a := range set {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}
