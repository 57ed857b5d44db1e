package main

import (
	"fmt"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/customresources"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis/manifest"
	"github.com/nodewright/nodewright/shared/core/settings"
)

// LoadConfig reads and validates the manifests at path (a file or a folder) exactly as
// `nodewright validate --feature-gates` does with the deployment's gates (static NodePools need
// StaticCapacity=true, NodeOverlays NodeOverlay=true), and returns the items to deploy. Every problem is in
// the error, one per line, so a synth of invalid manifests fails with the same messages.
func LoadConfig(path string, gates settings.FeatureGates) ([]state.ConfigItem, error) {
	objs, errs := manifest.Check(nil, path)
	for _, e := range manifest.Gated(objs, gates) {
		errs = append(errs, e)
	}
	if len(errs) > 0 {
		lines := make([]string, len(errs))
		for i, e := range errs {
			lines[i] = e.Error()
		}
		return nil, fmt.Errorf("invalid manifests (%d problems):\n%s", len(errs), strings.Join(lines, "\n"))
	}
	return state.ConfigItemsFrom(objs)
}

// configWriterAttr is the attribute a configuration item's custom resource stamps its construct path in.
const configWriterAttr = "writtenBy"

// awsCustomResourceSingleton is the construct id CDK gives the provider function behind every
// AwsCustomResource of a stack.
const awsCustomResourceSingleton = "AWS679f53fac002430cb0da5b7982bd2287"

// ConfigDeployment writes each configuration item into the state table, where the functions read it.
// Each object is its own custom resource: a changed object (new SpecHash) is written again with the next
// version, an object removed from the manifests is deleted from the table — only while the item is still
// the one this resource wrote. Every write stamps the item with the resource's construct path
// (writtenBy), and the delete is conditional on it: when a construct moves in the app, CloudFormation
// creates the new resource (which writes the item again under its own path) before it deletes the old
// one, whose delete then finds someone else's item and leaves it.
type ConfigDeployment struct {
	constructs.Construct
	Items []state.ConfigItem
}

// NewConfigDeployment deploys items into table.
func NewConfigDeployment(scope constructs.Construct, id string, table awsdynamodb.ITable, items []state.ConfigItem) *ConfigDeployment {
	c := constructs.NewConstruct(scope, jsii.String(id))
	policy := customresources.AwsCustomResourcePolicy_FromSdkCalls(&customresources.SdkCallsPolicyOptions{
		Resources: &[]*string{table.TableArn()},
	})
	for _, it := range items {
		writer := *c.Node().Path() + "/" + it.Kind + "-" + it.Name
		key := map[string]interface{}{
			state.PartitionKey: map[string]string{"S": "CONFIG"},
			state.SortKey:      map[string]string{"S": it.Kind + "#" + it.Name},
		}
		params := map[string]interface{}{
			"TableName": table.TableName(),
			"Key":       key,
			"UpdateExpression": "SET #kind = :kind, #name = :name, driftHash = :drift, specHash = :spec_hash, spec = :spec, " +
				"#writer = :writer ADD version :one",
			"ExpressionAttributeNames": map[string]string{
				"#kind": "kind", "#name": "name", "#writer": configWriterAttr,
			},
			"ExpressionAttributeValues": map[string]interface{}{
				":kind":      map[string]string{"S": it.Kind},
				":name":      map[string]string{"S": it.Name},
				":drift":     map[string]string{"S": it.DriftHash},
				":spec_hash": map[string]string{"S": it.SpecHash},
				":spec":      map[string]string{"S": it.Spec},
				":one":       map[string]string{"N": "1"},
				":writer":    map[string]string{"S": writer},
			},
		}
		if it.Kind == state.KindNodePool {
			staticPoolCondition(params, it.StaticPool)
		}
		write := &customresources.AwsSdkCall{
			Service:            jsii.String("DynamoDB"),
			Action:             jsii.String("updateItem"),
			Parameters:         params,
			PhysicalResourceId: customresources.PhysicalResourceId_Of(jsii.String("config/" + it.Kind + "/" + it.Name)),
		}
		customresources.NewAwsCustomResource(c, jsii.String(it.Kind+"-"+it.Name), &customresources.AwsCustomResourceProps{
			OnCreate: write,
			OnUpdate: write,
			OnDelete: &customresources.AwsSdkCall{
				Service: jsii.String("DynamoDB"),
				Action:  jsii.String("deleteItem"),
				Parameters: map[string]interface{}{"TableName": table.TableName(), "Key": key,
					"ConditionExpression":       "#writer = :writer",
					"ExpressionAttributeNames":  map[string]string{"#writer": configWriterAttr},
					"ExpressionAttributeValues": map[string]interface{}{":writer": map[string]string{"S": writer}},
				},
				// Another resource's item (or one `nodewright apply` rewrote) is not this resource's to delete.
				IgnoreErrorCodesMatching: jsii.String("ConditionalCheckFailedException"),
			},
			Policy:              policy,
			InstallLatestAwsSdk: jsii.Bool(false),
		})
	}
	if len(items) > 0 {
		// AwsCustomResource runs every call through one provider function that CDK creates per stack.
		stack := awscdk.Stack_Of(c)
		cdknag.NagSuppressions_AddResourceSuppressionsByPath(stack,
			jsii.String("/"+*stack.StackName()+"/"+awsCustomResourceSingleton), &[]*cdknag.NagPackSuppression{{
				Id: jsii.String("AwsSolutions-IAM4"),
				Reason: jsii.String("CDK's AwsCustomResource provider function uses AWSLambdaBasicExecutionRole only to write its own " +
					"CloudWatch logs; its table access is a separate inline policy limited to the state table's ARN."),
				AppliesTo: &[]interface{}{"Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole"},
			}}, jsii.Bool(true))
	}
	return &ConfigDeployment{Construct: c, Items: items}
}

// staticPoolCondition makes a NodePool's write record whether the pool is static and refuses it when the
// stored pool is the other kind: Karpenter's CRD refuses an update between static (replicas set) and
// dynamic, and a deploy can only compare with the stored item in the write itself. A stored item without
// the attribute was written before static pools existed, so it is dynamic. The refused write fails the
// deploy on this NodePool's resource (Custom::AWS, "The conditional request failed") and CloudFormation
// rolls back; `nodewright apply` says the same before it writes anything.
func staticPoolCondition(params map[string]interface{}, static bool) {
	params["UpdateExpression"] = "SET #kind = :kind, #name = :name, driftHash = :drift, specHash = :spec_hash, spec = :spec, " +
		"#writer = :writer, #static = :static ADD version :one"
	params["ExpressionAttributeNames"].(map[string]string)["#static"] = state.StaticPoolAttr
	params["ExpressionAttributeNames"].(map[string]string)["#pk"] = state.PartitionKey
	params["ExpressionAttributeValues"].(map[string]interface{})[":static"] = map[string]bool{"BOOL": static}
	params["ConditionExpression"] = state.StaticPoolWriteCondition(static)
}
