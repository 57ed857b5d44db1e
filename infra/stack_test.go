package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// synth builds the stack the way main does (cdk-nag included) and returns its template and annotations.
func synth(t *testing.T) (assertions.Template, assertions.Annotations) {
	t.Helper()
	return synthWith(t, nil)
}

// synthWith is synth with more context values.
func synthWith(t *testing.T, extra map[string]interface{}) (assertions.Template, assertions.Annotations) {
	t.Helper()
	ctx := map[string]interface{}{"clusterName": "unit", "manifests": "manifests", "functionsDir": fakeFunctions(t)}
	for k, v := range extra {
		ctx[k] = v
	}
	app := awscdk.NewApp(&awscdk.AppProps{Context: &ctx})
	props, err := stackPropsFromContext(app)
	require.NoError(t, err)
	stack := NewNodewrightStack(app, props.StackName(), props)
	awscdk.Aspects_Of(app).Add(cdknag.NewAwsSolutionsChecks(&cdknag.NagPackProps{Verbose: jsii.Bool(true)}), nil)
	return assertions.Template_FromStack(stack.Stack, nil), assertions.Annotations_FromStack(stack.Stack)
}

// fakeFunctions stands in for `make build`'s dist/: assertion tests check the template, not the binaries.
func fakeFunctions(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, fn := range []string{"webhook", "provisioner", "lifecycle", "interruption", "termination", "disruption"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, fn), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, fn, "bootstrap"), []byte("not a real binary"), 0o755))
	}
	return dir
}

func TestStack(t *testing.T) {
	template, annotations := synth(t)

	t.Run("state table is on demand, recoverable, expiring, encrypted and retained", func(t *testing.T) {
		template.ResourceCountIs(jsii.String("AWS::DynamoDB::Table"), jsii.Number(1))
		template.HasResourceProperties(jsii.String("AWS::DynamoDB::Table"), map[string]interface{}{
			"BillingMode": "PAY_PER_REQUEST",
			"KeySchema": []interface{}{
				map[string]interface{}{"AttributeName": "pk", "KeyType": "HASH"},
				map[string]interface{}{"AttributeName": "sk", "KeyType": "RANGE"},
			},
			"PointInTimeRecoverySpecification": map[string]interface{}{"PointInTimeRecoveryEnabled": true},
			"TimeToLiveSpecification":          map[string]interface{}{"AttributeName": "ttl", "Enabled": true},
			"SSESpecification":                 map[string]interface{}{"SSEEnabled": true},
			"DeletionProtectionEnabled":        true,
			"GlobalSecondaryIndexes": []interface{}{
				map[string]interface{}{"IndexName": "byInstance",
					"KeySchema":  []interface{}{map[string]interface{}{"AttributeName": "instanceId", "KeyType": "HASH"}},
					"Projection": map[string]interface{}{"ProjectionType": "ALL"}},
				map[string]interface{}{"IndexName": "byLifecycle",
					"KeySchema": []interface{}{
						map[string]interface{}{"AttributeName": "lifecycle", "KeyType": "HASH"},
						map[string]interface{}{"AttributeName": "sk", "KeyType": "RANGE"}},
					"Projection": map[string]interface{}{"ProjectionType": "ALL"}},
			},
		})
		template.HasResource(jsii.String("AWS::DynamoDB::Table"), map[string]interface{}{
			"DeletionPolicy": "Retain", "UpdateReplacePolicy": "Retain",
		})
	})

	t.Run("four work queues, each with a dead-letter queue", func(t *testing.T) {
		template.ResourceCountIs(jsii.String("AWS::SQS::Queue"), jsii.Number(8))
		queues := template.FindResources(jsii.String("AWS::SQS::Queue"), nil)
		var work, dead, fifo int
		for id, q := range *queues {
			res := *q
			props, _ := res["Properties"].(map[string]interface{})
			require.NotNil(t, props, id)
			assert.Equal(t, true, props["SqsManagedSseEnabled"], "%s must use SSE", id)
			if props["FifoQueue"] == true {
				fifo++
			}
			if redrive, ok := props["RedrivePolicy"].(map[string]interface{}); ok {
				work++
				assert.NotNil(t, redrive["deadLetterTargetArn"], id)
				assert.NotNil(t, redrive["maxReceiveCount"], id)
			} else {
				dead++
				assert.Equal(t, "Retain", res["DeletionPolicy"], "dead-letter queue %s is retained", id)
				assert.EqualValues(t, 14*24*3600, props["MessageRetentionPeriod"], "dead-letter queue %s keeps 14 days", id)
			}
		}
		assert.Equal(t, 4, work)
		assert.Equal(t, 4, dead)
		assert.Equal(t, 2, fifo, "the provisioning queue and its dead-letter queue are FIFO")
	})

	t.Run("every queue denies requests without TLS", func(t *testing.T) {
		template.ResourceCountIs(jsii.String("AWS::SQS::QueuePolicy"), jsii.Number(8))
		policies := template.FindResources(jsii.String("AWS::SQS::QueuePolicy"), map[string]interface{}{
			"Properties": map[string]interface{}{"PolicyDocument": map[string]interface{}{
				"Statement": assertions.Match_ArrayWith(&[]interface{}{assertions.Match_ObjectLike(&map[string]interface{}{
					"Effect":    "Deny",
					"Action":    "sqs:*",
					"Principal": map[string]interface{}{"AWS": "*"},
					"Condition": map[string]interface{}{"Bool": map[string]interface{}{"aws:SecureTransport": "false"}},
				})}),
			}},
		})
		assert.Len(t, *policies, 8)
	})

	t.Run("each configuration object is written into the state table", func(t *testing.T) {
		writes := template.FindResources(jsii.String("Custom::AWS"), nil)
		require.Len(t, *writes, 3, "the sample holds one NodePool and one EC2NodeClass; the settings are the third item")
		var keys []string
		for _, r := range *writes {
			res := *r
			create, ok := res["Properties"].(map[string]interface{})["Create"]
			require.True(t, ok)
			body := jsonString(t, create)
			assert.Contains(t, body, `updateItem`)
			assert.Contains(t, body, `ADD version :one`, "every change gets the next version")
			assert.Contains(t, body, `specHash`)
			for _, k := range []string{"NodePool#default", "EC2NodeClass#default", "Settings#cluster"} {
				if strings.Contains(body, k) {
					keys = append(keys, k)
				}
			}
			del := jsonString(t, res["Properties"].(map[string]interface{})["Delete"])
			assert.Contains(t, del, `deleteItem`)
			// The delete removes only the item this resource wrote: a moved construct's new resource has
			// rewritten it under its own path before the old one is deleted.
			assert.Contains(t, body, `#writer = :writer`)
			assert.Contains(t, del, `\"ConditionExpression\":\"#writer = :writer\"`)
			assert.Contains(t, del, `ConditionalCheckFailedException`, "someone else's item is left alone, not an error")
			writer := regexp.MustCompile(`\\":writer\\":\{\\"S\\":\\"([^\\]+)\\"`)
			written, deleted := writer.FindStringSubmatch(body), writer.FindStringSubmatch(del)
			if assert.Len(t, written, 2, body) && assert.Len(t, deleted, 2, del) {
				assert.Equal(t, written[1], deleted[1], "the delete's condition names the writer the write stamps")
			}
		}
		assert.ElementsMatch(t, []string{"NodePool#default", "EC2NodeClass#default", "Settings#cluster"}, keys)
	})

	t.Run("the webhook function sends only to the provisioning queue, behind a Function URL", func(t *testing.T) {
		template.HasResourceProperties(jsii.String("AWS::Lambda::Function"), map[string]interface{}{
			"Runtime": "provided.al2023", "Architectures": []interface{}{"arm64"}, "Handler": "bootstrap",
			"Environment": map[string]interface{}{"Variables": assertions.Match_ObjectLike(&map[string]interface{}{
				"NODEWRIGHT_CLUSTER_NAME": "unit",
			})},
		})
		template.HasResourceProperties(jsii.String("AWS::Lambda::Url"), map[string]interface{}{"AuthType": "NONE"})
		policies := template.FindResources(jsii.String("AWS::IAM::Policy"), nil)
		var webhookPolicy string
		for id, p := range *policies {
			if strings.HasPrefix(id, "WebhookHandlerRole") {
				webhookPolicy = jsonString(t, (*p)["Properties"])
			}
		}
		require.NotEmpty(t, webhookPolicy, "the webhook role has its own inline policy")
		assert.Contains(t, webhookPolicy, "sqs:SendMessage")
		assert.Contains(t, webhookPolicy, "QueuesProvisioning")
		assert.NotContains(t, webhookPolicy, "QueuesInterruption")
		assert.NotContains(t, webhookPolicy, "dynamodb:", "the webhook never touches the state table")
		assert.NotContains(t, webhookPolicy, `"Resource":"*"`)
		roles := template.FindResources(jsii.String("AWS::IAM::Role"), nil)
		for id, r := range *roles {
			if strings.HasPrefix(id, "WebhookHandlerRole") {
				assert.Nil(t, (*r)["Properties"].(map[string]interface{})["ManagedPolicyArns"], "no AWS managed policy on the webhook role")
			}
		}
	})

	t.Run("cdk-nag AwsSolutions finds nothing unsuppressed", func(t *testing.T) {
		errs := annotations.FindError(jsii.String("*"), assertions.Match_StringLikeRegexp(jsii.String("AwsSolutions-.*")))
		warns := annotations.FindWarning(jsii.String("*"), assertions.Match_StringLikeRegexp(jsii.String("AwsSolutions-.*")))
		for _, m := range append(*errs, *warns...) {
			finding, _ := json.Marshal(m)
			t.Errorf("cdk-nag: %s", finding)
		}
	})
}

func jsonString(t *testing.T, v interface{}) string {
	t.Helper()
	switch v := v.(type) {
	case string:
		return v
	case map[string]interface{}: // CloudFormation Fn::Join around tokens
		b, err := json.Marshal(v)
		require.NoError(t, err)
		return string(b)
	}
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func TestSynthFailsOnInvalidManifests(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte(`apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: bad}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
      - {key: karpenter.sh/capacity-type, operator: Matches, values: [spot]}
`), 0o600))
	app := awscdk.NewApp(&awscdk.AppProps{Context: &map[string]interface{}{"clusterName": "unit", "manifests": dir}})
	_, err := stackPropsFromContext(app)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `NodePool/bad: spec.template.spec.requirements[0].operator: Unsupported value: "Matches"`)

	app = awscdk.NewApp(&awscdk.AppProps{Context: &map[string]interface{}{"clusterName": "unit"}})
	_, err = stackPropsFromContext(app)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "manifests is required")
}

// TestSynthRefusesSettingsThatCouldNeverWork: Windows node classes, durations too long to time, NodePool
// names too long for their claims' launch tokens and dedicated tenancy fail the synth, as they fail
// nodewright validate.
func TestSynthRefusesSettingsThatCouldNeverWork(t *testing.T) {
	app := awscdk.NewApp(&awscdk.AppProps{Context: &map[string]interface{}{"clusterName": "unit",
		"manifests": filepath.Join("..", "shared", "core", "apis", "testdata", "unsupported")}})
	_, err := stackPropsFromContext(app)
	require.Error(t, err)
	for _, want := range []string{
		"EC2NodeClass/windows2022: spec.amiSelectorTerms[0].alias: Forbidden: not supported yet by nodewright: Windows nodes (windows2022@latest)",
		`NodePool/forever: spec.template.spec.expireAfter: Invalid value: "2562048h": is longer than the longest duration nodewright can time`,
		`NodePool/forever: spec.template.spec.terminationGracePeriod: Invalid value: "9999999999h": is longer than the longest duration nodewright can time`,
		"NodePool/general-purpose-on-demand-capacity-for-the-payments-teams: metadata.name: Invalid value",
		`NodePool/dedicated: spec.template.spec.requirements[0].values: Invalid value: ["dedicated"]: Nodewright launches shared-tenancy instances only`,
	} {
		assert.Contains(t, err.Error(), want)
	}
}

func TestStackPropsValidation(t *testing.T) {
	cases := []struct {
		name    string
		cluster string
		wantErr string
	}{
		{name: "missing", cluster: "", wantErr: "clusterName is required"},
		{name: "bad characters", cluster: "my cluster!", wantErr: "not a valid EKS cluster name"},
		{name: "leading dash", cluster: "-prod", wantErr: "not a valid EKS cluster name"},
		{name: "valid", cluster: "prod-eu_1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := StackProps{ClusterName: tc.cluster}.validate()
			if tc.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.wantErr)
		})
	}
}

// TestNagCatchesAnUnsafeQueue proves the cdk-nag check above can fail: a queue without a dead-letter queue
// or TLS policy is reported.
func TestNagCatchesAnUnsafeQueue(t *testing.T) {
	app := awscdk.NewApp(nil)
	stack := awscdk.NewStack(app, jsii.String("Unsafe"), nil)
	awssqs.NewQueue(stack, jsii.String("Bare"), nil)
	awscdk.Aspects_Of(app).Add(cdknag.NewAwsSolutionsChecks(nil), nil)
	errs := assertions.Annotations_FromStack(stack).FindError(jsii.String("*"),
		assertions.Match_StringLikeRegexp(jsii.String("AwsSolutions-SQS[34].*")))
	assert.Len(t, *errs, 2, "a bare queue lacks a DLQ (SQS3) and a TLS-only policy (SQS4)")
}
