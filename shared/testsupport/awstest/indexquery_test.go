package awstest

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAnIndexQueryAnswersInIndexOrder: motoserver.py lets an index query skip moto's sort of the whole
// table; the answer must stay DynamoDB's: every item with the index key, none without it, ordered by the
// index's sort key, paged, forwards and backwards.
func TestAnIndexQueryAnswersInIndexOrder(t *testing.T) {
	ctx := context.Background()
	db := dynamodb.NewFromConfig(Shared(t).Config())
	s := func(v string) *ddbtypes.AttributeValueMemberS { return &ddbtypes.AttributeValueMemberS{Value: v} }
	_, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:   aws.String("indexed"),
		BillingMode: ddbtypes.BillingModePayPerRequest,
		AttributeDefinitions: []ddbtypes.AttributeDefinition{
			{AttributeName: aws.String("pk"), AttributeType: ddbtypes.ScalarAttributeTypeS},
			{AttributeName: aws.String("sk"), AttributeType: ddbtypes.ScalarAttributeTypeS},
			{AttributeName: aws.String("state"), AttributeType: ddbtypes.ScalarAttributeTypeS},
			{AttributeName: aws.String("at"), AttributeType: ddbtypes.ScalarAttributeTypeS}},
		KeySchema: []ddbtypes.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: ddbtypes.KeyTypeHash},
			{AttributeName: aws.String("sk"), KeyType: ddbtypes.KeyTypeRange}},
		GlobalSecondaryIndexes: []ddbtypes.GlobalSecondaryIndex{{IndexName: aws.String("byState"),
			KeySchema: []ddbtypes.KeySchemaElement{{AttributeName: aws.String("state"), KeyType: ddbtypes.KeyTypeHash},
				{AttributeName: aws.String("at"), KeyType: ddbtypes.KeyTypeRange}},
			Projection: &ddbtypes.Projection{ProjectionType: ddbtypes.ProjectionTypeAll}}},
	})
	require.NoError(t, err)
	// Items spread over partitions, written out of index order; every third has no index key.
	for i := range 60 {
		item := map[string]ddbtypes.AttributeValue{"pk": s(fmt.Sprintf("p%d", i%7)), "sk": s(fmt.Sprintf("%03d", i))}
		if i%3 != 0 {
			item["state"], item["at"] = s([]string{"running", "done"}[i%2]), s(fmt.Sprintf("%03d", (i*37)%60))
		}
		_, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("indexed"), Item: item})
		require.NoError(t, err)
	}
	read := func(forward bool) []string {
		var ats []string
		var start map[string]ddbtypes.AttributeValue
		for {
			out, err := db.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("indexed"), IndexName: aws.String("byState"),
				KeyConditionExpression: aws.String("#s = :s"), ExpressionAttributeNames: map[string]string{"#s": "state"},
				ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{":s": s("running")},
				Limit:                     aws.Int32(4), ExclusiveStartKey: start, ScanIndexForward: aws.Bool(forward)})
			require.NoError(t, err)
			for _, it := range out.Items {
				ats = append(ats, it["at"].(*ddbtypes.AttributeValueMemberS).Value)
			}
			if out.LastEvaluatedKey == nil {
				return ats
			}
			start = out.LastEvaluatedKey
		}
	}
	var want []string
	for i := range 60 {
		if i%3 != 0 && i%2 == 0 {
			want = append(want, fmt.Sprintf("%03d", (i*37)%60))
		}
	}
	forward := read(true)
	assert.ElementsMatch(t, want, forward, "every running item once, nothing else")
	assert.IsIncreasing(t, forward, "in the index's sort order")
	backward := read(false)
	assert.IsDecreasing(t, backward, "and backwards when asked")
	assert.Len(t, backward, len(want))
}
