package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

// StateTable is the single DynamoDB table that holds claims, leases, dedupe records, unavailable
// offerings, budget ledgers, decision records and configuration. It outlives the stack: deleting the
// stack must never delete what Nodewright knows about running instances.
type StateTable struct {
	constructs.Construct
	Table awsdynamodb.Table
}

// NewStateTable creates the table with the schema of shared/adapters/state (keys, TTL attribute, indexes): on
// demand, point-in-time recovery, AWS-managed KMS encryption, deletion protection, retained on stack
// deletion.
func NewStateTable(scope constructs.Construct, id string) *StateTable {
	c := constructs.NewConstruct(scope, jsii.String(id))
	table := awsdynamodb.NewTable(c, jsii.String("Table"), &awsdynamodb.TableProps{
		PartitionKey: stringAttr(state.PartitionKey),
		SortKey:      stringAttr(state.SortKey),
		BillingMode:  awsdynamodb.BillingMode_PAY_PER_REQUEST,
		PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
			PointInTimeRecoveryEnabled: jsii.Bool(true),
		},
		Encryption:          awsdynamodb.TableEncryption_AWS_MANAGED,
		TimeToLiveAttribute: jsii.String(state.TTLAttribute),
		DeletionProtection:  jsii.Bool(true),
		RemovalPolicy:       awscdk.RemovalPolicy_RETAIN,
	})
	for _, gsi := range state.CreateTableInput("").GlobalSecondaryIndexes {
		props := &awsdynamodb.GlobalSecondaryIndexProps{IndexName: gsi.IndexName, ProjectionType: awsdynamodb.ProjectionType_ALL}
		for _, k := range gsi.KeySchema {
			if k.KeyType == "HASH" {
				props.PartitionKey = stringAttr(*k.AttributeName)
			} else {
				props.SortKey = stringAttr(*k.AttributeName)
			}
		}
		table.AddGlobalSecondaryIndex(props)
	}
	return &StateTable{Construct: c, Table: table}
}

func stringAttr(name string) *awsdynamodb.Attribute {
	return &awsdynamodb.Attribute{Name: jsii.String(name), Type: awsdynamodb.AttributeType_STRING}
}
