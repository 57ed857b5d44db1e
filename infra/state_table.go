package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// State table key and TTL attribute names; the state adapter in shared/ uses the same names.
const (
	StateTablePartitionKey = "pk"
	StateTableSortKey      = "sk"
	StateTableTTLAttribute = "ttl"
)

// StateTable is the single DynamoDB table that holds claims, leases, dedupe records, unavailable
// offerings, budget ledgers, decision records and configuration. It outlives the stack: deleting the
// stack must never delete what Nodewright knows about running instances.
type StateTable struct {
	constructs.Construct
	Table awsdynamodb.Table
}

// NewStateTable creates the table: on demand, point-in-time recovery, TTL, AWS-managed KMS encryption,
// deletion protection, retained on stack deletion.
func NewStateTable(scope constructs.Construct, id string) *StateTable {
	c := constructs.NewConstruct(scope, jsii.String(id))
	table := awsdynamodb.NewTable(c, jsii.String("Table"), &awsdynamodb.TableProps{
		PartitionKey: &awsdynamodb.Attribute{Name: jsii.String(StateTablePartitionKey), Type: awsdynamodb.AttributeType_STRING},
		SortKey:      &awsdynamodb.Attribute{Name: jsii.String(StateTableSortKey), Type: awsdynamodb.AttributeType_STRING},
		BillingMode:  awsdynamodb.BillingMode_PAY_PER_REQUEST,
		PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
			PointInTimeRecoveryEnabled: jsii.Bool(true),
		},
		Encryption:          awsdynamodb.TableEncryption_AWS_MANAGED,
		TimeToLiveAttribute: jsii.String(StateTableTTLAttribute),
		DeletionProtection:  jsii.Bool(true),
		RemovalPolicy:       awscdk.RemovalPolicy_RETAIN,
	})
	return &StateTable{Construct: c, Table: table}
}
