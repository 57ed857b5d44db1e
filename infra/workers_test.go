package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/footprint"
)

// cfnTemplate is a synthesized template as plain JSON values.
type cfnTemplate map[string]map[string]interface{}

func toCfn(t *testing.T, template assertions.Template) cfnTemplate {
	t.Helper()
	b, err := json.Marshal(template.ToJSON())
	require.NoError(t, err)
	var doc struct {
		Resources cfnTemplate `json:"Resources"`
	}
	require.NoError(t, json.Unmarshal(b, &doc))
	return doc.Resources
}

// one returns the single resource of typ whose logical id starts with prefix.
func (c cfnTemplate) one(t *testing.T, typ, prefix string) (string, map[string]interface{}) {
	t.Helper()
	var id string
	var props map[string]interface{}
	for k, r := range c {
		if r["Type"] == typ && strings.HasPrefix(k, prefix) {
			require.Empty(t, id, "more than one %s with prefix %s", typ, prefix)
			id, props = k, r["Properties"].(map[string]interface{})
		}
	}
	require.NotEmpty(t, id, "no %s with prefix %s", typ, prefix)
	return id, props
}

// exact returns the resource whose logical id is prefix and CDK's 8-character hash.
func (c cfnTemplate) exact(t *testing.T, typ, prefix string) map[string]interface{} {
	t.Helper()
	for k, r := range c {
		if r["Type"] == typ && strings.HasPrefix(k, prefix) && len(k) == len(prefix)+8 {
			return r["Properties"].(map[string]interface{})
		}
	}
	require.Failf(t, "missing resource", "no %s %s<hash>", typ, prefix)
	return nil
}

func (c cfnTemplate) ofType(typ string) map[string]map[string]interface{} {
	out := map[string]map[string]interface{}{}
	for k, r := range c {
		if r["Type"] == typ {
			out[k], _ = r["Properties"].(map[string]interface{})
		}
	}
	return out
}

// statements are the statements of the role's inline policy (the role's logical id prefix, e.g.
// "ProvisionerHandlerRole").
func (c cfnTemplate) statements(t *testing.T, rolePrefix string) []map[string]interface{} {
	t.Helper()
	_, props := c.one(t, "AWS::IAM::Policy", rolePrefix+"DefaultPolicy")
	var out []map[string]interface{}
	for _, s := range props["PolicyDocument"].(map[string]interface{})["Statement"].([]interface{}) {
		out = append(out, s.(map[string]interface{}))
	}
	return out
}

// strs flattens a string or a list of strings (IAM allows both).
func strs(v interface{}) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []interface{}:
		var out []string
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func js(t *testing.T, v interface{}) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func hasAction(s map[string]interface{}, action string) bool {
	for _, a := range strs(s["Action"]) {
		if a == action {
			return true
		}
	}
	return false
}

var workerFunctions = map[string]struct {
	prefix   string
	env      []string
	reserved interface{}
}{
	"provisioner":  {prefix: "Provisioner", env: []string{"GOMEMLIMIT", "NODEWRIGHT_CLUSTER_NAME", "NODEWRIGHT_STATE_TABLE"}, reserved: 3.0},
	"lifecycle":    {prefix: "Lifecycle", env: []string{"GOMEMLIMIT", "NODEWRIGHT_CLUSTER_NAME", "NODEWRIGHT_STATE_TABLE", "NODEWRIGHT_TERMINATION_QUEUE_URL"}, reserved: 2.0},
	"interruption": {prefix: "Interruption", env: []string{"GOMEMLIMIT", "NODEWRIGHT_CLUSTER_NAME", "NODEWRIGHT_STATE_TABLE", "NODEWRIGHT_PROVISIONING_QUEUE_URL", "NODEWRIGHT_TERMINATION_QUEUE_URL", "NODEWRIGHT_REBALANCE_POLICY"}, reserved: 10.0},
	"termination":  {prefix: "Termination", env: []string{"GOMEMLIMIT", "NODEWRIGHT_CLUSTER_NAME", "NODEWRIGHT_STATE_TABLE", "NODEWRIGHT_TERMINATION_QUEUE_URL", "NODEWRIGHT_PROVISIONING_QUEUE_URL", "NODEWRIGHT_DISRUPTION_QUEUE_URL"}, reserved: 10.0},
	"disruption":   {prefix: "Disruption", env: []string{"GOMEMLIMIT", "NODEWRIGHT_CLUSTER_NAME", "NODEWRIGHT_STATE_TABLE", "NODEWRIGHT_TERMINATION_QUEUE_URL"}, reserved: 3.0},
}

func TestWorkers(t *testing.T) {
	template, _ := synth(t)
	cfn := toCfn(t, template)

	t.Run("each function runs on arm64 provided.al2023 with its environment", func(t *testing.T) {
		for name, f := range workerFunctions {
			_, props := cfn.one(t, "AWS::Lambda::Function", f.prefix+"HandlerFunction")
			assert.Equal(t, "provided.al2023", props["Runtime"], name)
			assert.Equal(t, []interface{}{"arm64"}, props["Architectures"], name)
			vars := props["Environment"].(map[string]interface{})["Variables"].(map[string]interface{})
			keys := make([]string, 0, len(vars))
			for k := range vars {
				keys = append(keys, k)
			}
			assert.ElementsMatch(t, f.env, keys, name)
			assert.Equal(t, "unit", vars["NODEWRIGHT_CLUSTER_NAME"], name)
			assert.Contains(t, js(t, vars["NODEWRIGHT_STATE_TABLE"]), `"Ref":"StateTable`, name)
			assert.Equal(t, f.reserved, props["ReservedConcurrentExecutions"], "%s reserved concurrency", name)
		}
		_, props := cfn.one(t, "AWS::Lambda::Function", "InterruptionHandlerFunction")
		assert.Equal(t, "event", props["Environment"].(map[string]interface{})["Variables"].(map[string]interface{})["NODEWRIGHT_REBALANCE_POLICY"])
		for name, want := range map[string]float64{"Provisioner": 60, "Lifecycle": 60, "Interruption": 30, "Termination": 60, "Disruption": 180} {
			_, props := cfn.one(t, "AWS::Lambda::Function", name+"HandlerFunction")
			assert.EqualValues(t, want, props["Timeout"], name)
		}
		_, props = cfn.one(t, "AWS::Lambda::Function", "ProvisionerHandlerFunction")
		assert.EqualValues(t, 1024, props["MemorySize"], "the default tier keeps what the provisioner had")
		assert.Equal(t, "921MiB", props["Environment"].(map[string]interface{})["Variables"].(map[string]interface{})["GOMEMLIMIT"])
	})

	t.Run("queue consumers report partial batch failures and fit in the visibility timeout", func(t *testing.T) {
		mappings := cfn.ofType("AWS::Lambda::EventSourceMapping")
		require.Len(t, mappings, 4)
		consumers := map[string]string{"Provisioner": "QueuesProvisioning", "Interruption": "QueuesInterruption", "Termination": "QueuesTermination",
			"Disruption": "QueuesDisruptionWake"}
		for fn, queue := range consumers {
			id, props := cfn.one(t, "AWS::Lambda::EventSourceMapping", fn+"HandlerFunctionSqsEventSource")
			assert.Equal(t, []interface{}{"ReportBatchItemFailures"}, props["FunctionResponseTypes"], id)
			assert.Contains(t, js(t, props["EventSourceArn"]), `"`+queue, id)
			assert.EqualValues(t, 10, props["BatchSize"], id)
			// Never more batches at once than the function may run: a throttled batch counts a receive.
			_, fnProps := cfn.one(t, "AWS::Lambda::Function", fn+"HandlerFunction")
			pollers := props["ScalingConfig"].(map[string]interface{})["MaximumConcurrency"].(float64)
			assert.LessOrEqual(t, pollers, fnProps["ReservedConcurrentExecutions"].(float64), id)
			if fn == "Provisioner" || fn == "Disruption" {
				assert.EqualValues(t, 2, pollers, "%s is serialised by its lease; 2 is Lambda's minimum", id)
				assert.EqualValues(t, pollers+1, fnProps["ReservedConcurrentExecutions"], "%s: the pollers and the schedule tick", id)
			}
			q := cfn.exact(t, "AWS::SQS::Queue", queue)
			_, f := cfn.one(t, "AWS::Lambda::Function", fn+"HandlerFunction")
			assert.GreaterOrEqual(t, q["VisibilityTimeout"].(float64), f["Timeout"].(float64), "%s visibility timeout", queue)
		}
		_, props := cfn.one(t, "AWS::Lambda::EventSourceMapping", "InterruptionHandlerFunctionSqsEventSource")
		assert.LessOrEqual(t, props["MaximumBatchingWindowInSeconds"].(float64), 5.0, "interruptions are urgent")
		q := cfn.exact(t, "AWS::SQS::Queue", "QueuesInterruption")
		redrive := q["RedrivePolicy"].(map[string]interface{})
		assert.GreaterOrEqual(t, redrive["maxReceiveCount"].(float64), 3.0)
		assert.LessOrEqual(t, redrive["maxReceiveCount"].(float64), 5.0)
	})

	t.Run("provisioner, lifecycle and disruption also run every minute", func(t *testing.T) {
		for _, fn := range []string{"Provisioner", "Lifecycle", "Disruption"} {
			_, rule := cfn.one(t, "AWS::Events::Rule", fn+"HandlerEveryMinute")
			assert.Equal(t, "rate(1 minute)", rule["ScheduleExpression"])
			assert.Contains(t, js(t, rule["Targets"]), `"`+fn+`HandlerFunction`)
			_, cfg := cfn.one(t, "AWS::Lambda::EventInvokeConfig", fn+"HandlerFunction")
			assert.EqualValues(t, 0, cfg["MaximumRetryAttempts"], "a late tick is dropped, not retried")
		}
	})

	t.Run("lifecycle also starts when an instance is running", func(t *testing.T) {
		_, rule := cfn.one(t, "AWS::Events::Rule", "LifecycleHandlerOnInstanceRunning")
		assert.JSONEq(t, `{"source":["aws.ec2"],"detail-type":["EC2 Instance State-change Notification"],"detail":{"state":["running"]}}`,
			js(t, rule["EventPattern"]))
		assert.Contains(t, js(t, rule["Targets"]), `"LifecycleHandlerFunction`)
	})

	t.Run("five rules feed the interruption queue with exact patterns", func(t *testing.T) {
		template.ResourceCountIs(jsii.String("AWS::Events::Rule"), jsii.Number(9)) // five + three schedules + lifecycle on running
		patterns := []map[string]interface{}{
			{"source": []interface{}{"aws.ec2"}, "detail-type": []interface{}{"EC2 Spot Instance Interruption Warning"}},
			{"source": []interface{}{"aws.ec2"}, "detail-type": []interface{}{"EC2 Instance Rebalance Recommendation"}},
			{"source": []interface{}{"aws.ec2"}, "detail-type": []interface{}{"EC2 Instance State-change Notification"},
				"detail": map[string]interface{}{"state": []interface{}{"stopping", "stopped", "shutting-down", "terminated"}}},
			{"source": []interface{}{"aws.ec2"}, "detail-type": []interface{}{"EC2 Capacity Reservation Instance Interruption Warning"}},
			{"source": []interface{}{"aws.health"}, "detail-type": []interface{}{"AWS Health Event"},
				"detail": map[string]interface{}{"service": []interface{}{"EC2"}, "eventTypeCategory": []interface{}{"scheduledChange"}}},
		}
		for _, p := range patterns {
			template.HasResourceProperties(jsii.String("AWS::Events::Rule"), map[string]interface{}{
				"EventPattern": assertions.Match_ObjectEquals(&p),
				"Targets": assertions.Match_ArrayWith(&[]interface{}{assertions.Match_ObjectLike(&map[string]interface{}{
					"Arn": map[string]interface{}{"Fn::GetAtt": []interface{}{assertions.Match_StringLikeRegexp(jsii.String("^QueuesInterruption[0-9A-F]")), "Arn"}},
					// An event EventBridge cannot deliver goes to the dead-letter queue, whose alarm pages.
					"DeadLetterConfig": map[string]interface{}{"Arn": map[string]interface{}{"Fn::GetAtt": []interface{}{
						assertions.Match_StringLikeRegexp(jsii.String("^QueuesInterruptionDeadLetter")), "Arn"}}},
					"RetryPolicy": map[string]interface{}{"MaximumEventAgeInSeconds": 3600, "MaximumRetryAttempts": 185},
				})}),
			})
		}
	})

	t.Run("EventBridge may send to the interruption queue only from those rules", func(t *testing.T) {
		_, policy := cfn.one(t, "AWS::SQS::QueuePolicy", "QueuesInterruptionPolicy")
		rules := map[string]bool{}
		for _, s := range policy["PolicyDocument"].(map[string]interface{})["Statement"].([]interface{}) {
			st := s.(map[string]interface{})
			if js(t, st["Principal"]) != `{"Service":"events.amazonaws.com"}` {
				continue
			}
			arn := st["Condition"].(map[string]interface{})["ArnEquals"].(map[string]interface{})["aws:SourceArn"]
			getAtt := strs(arn.(map[string]interface{})["Fn::GetAtt"])
			require.Len(t, getAtt, 2, js(t, st))
			assert.True(t, strings.HasPrefix(getAtt[0], "InterruptionRules"), getAtt[0])
			rules[getAtt[0]] = true
		}
		assert.Len(t, rules, 5, "one SourceArn per rule")
	})

	t.Run("instances are launched and tagged only as the cluster's", func(t *testing.T) {
		// The provisioner launches for pending pods, the disruption function launches replacements.
		var tagged, fromTemplates, marks, selected, claimTags int
		for _, s := range append(cfn.statements(t, "ProvisionerHandlerRole"), cfn.statements(t, "DisruptionHandlerRole")...) {
			if !hasAction(s, "ec2:RunInstances") && !hasAction(s, "ec2:CreateFleet") && !hasAction(s, "ec2:CreateTags") {
				continue
			}
			res, cond := js(t, s["Resource"]), js(t, s["Condition"])
			switch {
			case s["Sid"] == "TagOwnedInstancesWithClaim":
				claimTags++
				assert.Equal(t, []string{"ec2:CreateTags"}, strs(s["Action"]))
				assert.NotContains(t, res, ":volume/*", "only instances")
				assert.Equal(t, `{"ForAllValues:StringEquals":{"aws:TagKeys":["nodewright.sh/nodeclaim"]},`+
					`"StringEquals":{"aws:ResourceTag/nodewright.sh/cluster":"unit"}}`, cond, "only the claim tag, only on owned instances")
			case strings.Contains(res, ":instance/*"):
				tagged++
				assert.Contains(t, cond, `"aws:RequestTag/nodewright.sh/cluster":"unit"`, s["Sid"])
				assert.NotContains(t, cond, "kubernetes.io/cluster", s["Sid"])
				for _, r := range []string{"volume", "network-interface", "fleet", "spot-instances-request", "launch-template"} {
					assert.Contains(t, res, ":"+r+"/*", s["Sid"])
				}
				if hasAction(s, "ec2:CreateTags") {
					assert.Contains(t, cond, `"ec2:CreateAction":["RunInstances","CreateFleet","CreateLaunchTemplate"]`)
				}
			case strings.Contains(res, ":launch-template/*") && hasAction(s, "ec2:CreateTags"):
				marks++
				assert.Equal(t, []string{"ec2:CreateTags"}, strs(s["Action"]), s["Sid"])
				assert.Equal(t, `{"ForAllValues:StringEquals":{"aws:TagKeys":["nodewright.sh/last-used"]},`+
					`"StringEquals":{"aws:ResourceTag/nodewright.sh/cluster":"unit"}}`, cond, "only the last-used mark, only on owned templates")
			case strings.Contains(res, ":launch-template/*"):
				fromTemplates++
				assert.Contains(t, cond, `"aws:ResourceTag/nodewright.sh/cluster":"unit"`, s["Sid"])
			default:
				selected++
				assert.Nil(t, s["Condition"], s["Sid"])
				for _, r := range []string{"::image/*", "::snapshot/*", ":subnet/*", ":security-group/*", ":*:capacity-reservation/*"} {
					assert.Contains(t, res, r, s["Sid"])
				}
			}
		}
		assert.Equal(t, 4, tagged, "launch/create and tag-on-create statements, in both roles")
		assert.Equal(t, 2, fromTemplates)
		assert.Equal(t, 2, marks, "both roles mark the templates they launch from as used")
		assert.Equal(t, 2, selected)
		assert.Equal(t, 2, claimTags, "both roles tag batched instances with their claims")
	})

	t.Run("only termination terminates, and only instances tagged nodewright.sh/cluster", func(t *testing.T) {
		deleteTemplates := map[string]int{}
		for name, f := range workerFunctions {
			var terminate int
			for _, s := range cfn.statements(t, f.prefix+"HandlerRole") {
				if hasAction(s, "ec2:TerminateInstances") {
					terminate++
					assert.Equal(t, `{"StringEquals":{"aws:ResourceTag/nodewright.sh/cluster":"unit"}}`, js(t, s["Condition"]), name)
					assert.Contains(t, js(t, s["Resource"]), ":instance/*", name)
				}
				if hasAction(s, "ec2:DeleteLaunchTemplate") {
					deleteTemplates[name]++
					assert.Equal(t, `{"StringEquals":{"aws:ResourceTag/nodewright.sh/cluster":"unit"}}`, js(t, s["Condition"]), name)
					assert.Contains(t, js(t, s["Resource"]), ":launch-template/*", name)
				}
			}
			// The lifecycle hands nodes to the termination flow (DESIGN decision 10) and needs no grant.
			want := map[string]int{"termination": 1}[name]
			assert.Equal(t, want, terminate, name)
		}
		assert.Equal(t, map[string]int{"lifecycle": 1}, deleteTemplates, "only the lifecycle's housekeeping deletes launch templates")
	})

	t.Run("the lifecycle deletes only the cluster's managed instance profiles", func(t *testing.T) {
		byAction := map[string]map[string]interface{}{}
		for name, f := range workerFunctions {
			for _, s := range cfn.statements(t, f.prefix+"HandlerRole") {
				for _, a := range strs(s["Action"]) {
					if a == "iam:DeleteInstanceProfile" || a == "iam:ListInstanceProfiles" {
						require.Equal(t, "lifecycle", name, a)
					}
					if name == "lifecycle" && strings.HasPrefix(a, "iam:") {
						byAction[a] = s
					}
				}
			}
		}
		for _, a := range []string{"iam:DeleteInstanceProfile", "iam:RemoveRoleFromInstanceProfile"} {
			require.Contains(t, byAction, a)
			assert.Equal(t, `{"StringEquals":{"aws:ResourceTag/nodewright.sh/cluster":"unit"}}`, js(t, byAction[a]["Condition"]), a)
			assert.Contains(t, js(t, byAction[a]["Resource"]), ":instance-profile/nodewright_unit_*", a)
		}
		require.Contains(t, byAction, "iam:GetInstanceProfile")
		assert.Contains(t, js(t, byAction["iam:GetInstanceProfile"]["Resource"]), ":instance-profile/nodewright_unit_*")
		require.Contains(t, byAction, "iam:ListInstanceProfiles")
		assert.Len(t, byAction, 4, "no other IAM action")
	})

	t.Run("PassRole names only the manifests' node role, for EC2", func(t *testing.T) {
		var passRole []map[string]interface{}
		for _, f := range workerFunctions {
			for _, s := range cfn.statements(t, f.prefix+"HandlerRole") {
				if hasAction(s, "iam:PassRole") {
					passRole = append(passRole, s)
				}
				for _, a := range strs(s["Action"]) {
					assert.NotContains(t, a, "*", "action wildcards: %s", a)
				}
			}
		}
		require.Len(t, passRole, 2, "the provisioner and the disruption function launch")
		for _, s := range passRole {
			res := js(t, s["Resource"])
			assert.Contains(t, res, `:role/KarpenterNodeRole-demo"`)
			assert.NotContains(t, res, "*")
			assert.Equal(t, `{"StringEquals":{"iam:PassedToService":"ec2.amazonaws.com"}}`, js(t, s["Condition"]))
		}
	})

	t.Run("each role uses the state table and its indexes with only the actions it needs", func(t *testing.T) {
		want := map[string][]string{
			"provisioner": {"dynamodb:GetItem", "dynamodb:Query", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:BatchWriteItem",
				"dynamodb:ConditionCheckItem", "dynamodb:DeleteItem", "dynamodb:BatchGetItem"},
			"lifecycle": {"dynamodb:GetItem", "dynamodb:Query", "dynamodb:PutItem", "dynamodb:UpdateItem",
				"dynamodb:ConditionCheckItem", "dynamodb:DeleteItem", "dynamodb:BatchGetItem"},
			"interruption": {"dynamodb:GetItem", "dynamodb:Query", "dynamodb:PutItem", "dynamodb:UpdateItem"}, // UpdateItem: ReleaseEvent
			"termination":  {"dynamodb:GetItem", "dynamodb:Query", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"},
			"disruption": {"dynamodb:GetItem", "dynamodb:Query", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem",
				"dynamodb:BatchWriteItem", "dynamodb:ConditionCheckItem", "dynamodb:BatchGetItem"},
		}
		for name, f := range workerFunctions {
			var actions []string
			for _, s := range cfn.statements(t, f.prefix+"HandlerRole") {
				res := js(t, s["Resource"])
				for _, a := range strs(s["Action"]) {
					if strings.HasPrefix(a, "dynamodb:") {
						actions = append(actions, a)
						assert.Contains(t, res, "StateTable", name)
						assert.Contains(t, res, "/index/byInstance", name)
						assert.NotContains(t, res, "*", name)
					}
					if a == "eks:DescribeCluster" {
						assert.Contains(t, res, ":cluster/unit", name)
					}
				}
				assert.NotContains(t, strs(s["Action"]), "sts:GetCallerIdentity", name)
			}
			assert.ElementsMatch(t, want[name], actions, name)
		}
	})

	// Interruption also re-sends to its own queue: a notice that keeps failing goes back as a fresh copy
	// (shared/flows/interruption FreshCopyAfterReceives) instead of to the dead-letter queue.
	t.Run("interruption sends to the provisioning, termination and its own queues and only reads EC2", func(t *testing.T) {
		var sendsTo []string
		for _, s := range cfn.statements(t, "InterruptionHandlerRole") {
			if hasAction(s, "sqs:SendMessage") {
				sendsTo = append(sendsTo, js(t, s["Resource"]))
			}
			for _, a := range strs(s["Action"]) {
				// DescribeInstances tells whose an instance is when the claims' index does not name it yet.
				assert.False(t, strings.HasPrefix(a, "ec2:") && a != "ec2:DescribeInstances", a)
			}
		}
		require.Len(t, sendsTo, 3)
		assert.Contains(t, strings.Join(sendsTo, " "), `"QueuesProvisioning`)
		assert.Contains(t, strings.Join(sendsTo, " "), `"QueuesTermination`)
		assert.Contains(t, strings.Join(sendsTo, " "), `"QueuesInterruption`)
	})

	// Who may send to which queue: termination re-sends to its own queue, wakes the provisioner when a
	// drain starts and the disruption function when a claim is gone; the lifecycle and the disruption
	// function remove nothing themselves, they hand nodes to the termination flow.
	for role, queues := range map[string][]string{
		"TerminationHandlerRole": {"QueuesTermination", "QueuesProvisioning", "QueuesDisruptionWake"},
		"LifecycleHandlerRole":   {"QueuesTermination"},
		"DisruptionHandlerRole":  {"QueuesTermination"},
	} {
		t.Run(role+" sends to "+strings.Join(queues, " and "), func(t *testing.T) {
			var sendsTo []string
			for _, s := range cfn.statements(t, role) {
				if hasAction(s, "sqs:SendMessage") {
					sendsTo = append(sendsTo, js(t, s["Resource"]))
				}
			}
			require.Len(t, sendsTo, len(queues))
			for _, q := range queues {
				assert.Contains(t, strings.Join(sendsTo, " "), `"`+q)
			}
		})
	}

	t.Run("each function role has an access entry in its own Kubernetes group", func(t *testing.T) {
		entries := cfn.ofType("AWS::EKS::AccessEntry")
		require.Len(t, entries, 5)
		groupOf := map[string]string{} // role logical id prefix → groups
		for id, e := range entries {
			assert.Equal(t, "unit", e["ClusterName"], id)
			assert.Equal(t, "STANDARD", e["Type"], id)
			groups := e["KubernetesGroups"].([]interface{})
			require.Len(t, groups, 1, id)
			groupOf[strs(e["PrincipalArn"].(map[string]interface{})["Fn::GetAtt"])[0]] = groups[0].(string)
		}
		for name, f := range workerFunctions {
			found := false
			for principal, group := range groupOf {
				if strings.HasPrefix(principal, f.prefix+"HandlerRole") {
					found = true
					assert.Equal(t, footprint.Function(name).Group(), group, "%s's access entry puts its role in its own group", name)
				}
			}
			assert.True(t, found, "access entry for %s", f.prefix)
		}
	})
}
