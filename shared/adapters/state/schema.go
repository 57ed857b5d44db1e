package state

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Table schema: the CDK stack and CreateTableInput use these names.
const (
	PartitionKey = "pk"
	SortKey      = "sk"
	TTLAttribute = "ttl"

	// IndexByInstance finds the claim of an EC2 instance (interruption events carry instance ids).
	IndexByInstance = "byInstance"
	// IndexByLifecycle lists claims in one lifecycle state.
	IndexByLifecycle = "byLifecycle"

	attrInstanceID = "instanceId"
	attrLifecycle  = "lifecycle"
)

// CreateTableInput describes the state table as the CDK stack creates it (on demand, with both indexes).
// Tests and the local sandbox create their tables from it.
func CreateTableInput(name string) *dynamodb.CreateTableInput {
	str := types.ScalarAttributeTypeS
	return &dynamodb.CreateTableInput{
		TableName:   aws.String(name),
		BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String(PartitionKey), AttributeType: str},
			{AttributeName: aws.String(SortKey), AttributeType: str},
			{AttributeName: aws.String(attrInstanceID), AttributeType: str},
			{AttributeName: aws.String(attrLifecycle), AttributeType: str},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String(PartitionKey), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(SortKey), KeyType: types.KeyTypeRange},
		},
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{
			{
				IndexName:  aws.String(IndexByInstance),
				KeySchema:  []types.KeySchemaElement{{AttributeName: aws.String(attrInstanceID), KeyType: types.KeyTypeHash}},
				Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
			},
			{
				IndexName: aws.String(IndexByLifecycle),
				KeySchema: []types.KeySchemaElement{
					{AttributeName: aws.String(attrLifecycle), KeyType: types.KeyTypeHash},
					{AttributeName: aws.String(SortKey), KeyType: types.KeyTypeRange},
				},
				Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
			},
		},
	}
}
