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

func pkSK(pk, sk string) map[string]ddbtypes.AttributeValue {
	return map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: pk}, "sk": &ddbtypes.AttributeValueMemberS{Value: sk}}
}

// TestAFailedTransactionChangesNothingAndQueriesReadTheirPartition: motoserver.py backs up only the
// items a transaction names and answers table queries from their partition; what a client sees must be
// DynamoDB's answers all the same: a cancelled transaction leaves every item (created, changed or deleted
// by it) as it was, and a query returns its partition's items in sort-key order, paged.
func TestAFailedTransactionChangesNothingAndQueriesReadTheirPartition(t *testing.T) {
	ctx := context.Background()
	db := dynamodb.NewFromConfig(Shared(t).Config())
	_, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:   aws.String("t"),
		BillingMode: ddbtypes.BillingModePayPerRequest,
		AttributeDefinitions: []ddbtypes.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: ddbtypes.ScalarAttributeTypeS},
			{AttributeName: aws.String("sk"), AttributeType: ddbtypes.ScalarAttributeTypeS}},
		KeySchema: []ddbtypes.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: ddbtypes.KeyTypeHash},
			{AttributeName: aws.String("sk"), KeyType: ddbtypes.KeyTypeRange}},
	})
	require.NoError(t, err)
	for _, p := range []string{"a", "b"} {
		for i := range 30 {
			item := pkSK(p, fmt.Sprintf("%03d", i))
			item["v"] = &ddbtypes.AttributeValueMemberN{Value: "1"}
			_, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("t"), Item: item})
			require.NoError(t, err)
		}
	}

	changed := pkSK("a", "000")
	changed["v"] = &ddbtypes.AttributeValueMemberN{Value: "2"}
	_, err = db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []ddbtypes.TransactWriteItem{
		{Put: &ddbtypes.Put{TableName: aws.String("t"), Item: changed}},
		{Put: &ddbtypes.Put{TableName: aws.String("t"), Item: pkSK("c", "new")}},
		{Delete: &ddbtypes.Delete{TableName: aws.String("t"), Key: pkSK("a", "001")}},
		{ConditionCheck: &ddbtypes.ConditionCheck{TableName: aws.String("t"), Key: pkSK("b", "000"),
			ConditionExpression: aws.String("attribute_not_exists(pk)")}},
	}})
	var cancelled *ddbtypes.TransactionCanceledException
	require.ErrorAs(t, err, &cancelled)

	get := func(k map[string]ddbtypes.AttributeValue) map[string]ddbtypes.AttributeValue {
		out, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("t"), Key: k, ConsistentRead: aws.Bool(true)})
		require.NoError(t, err)
		return out.Item
	}
	assert.Equal(t, "1", get(pkSK("a", "000"))["v"].(*ddbtypes.AttributeValueMemberN).Value, "the put is undone")
	assert.NotNil(t, get(pkSK("a", "001")), "the delete is undone")
	assert.Nil(t, get(pkSK("c", "new")), "the created item is gone")

	var keys []string
	var start map[string]ddbtypes.AttributeValue
	for {
		out, err := db.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("t"), KeyConditionExpression: aws.String("pk = :p"),
			ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{":p": &ddbtypes.AttributeValueMemberS{Value: "b"}},
			Limit:                     aws.Int32(7), ExclusiveStartKey: start, ConsistentRead: aws.Bool(true)})
		require.NoError(t, err)
		for _, it := range out.Items {
			keys = append(keys, it["pk"].(*ddbtypes.AttributeValueMemberS).Value+"/"+it["sk"].(*ddbtypes.AttributeValueMemberS).Value)
		}
		if out.LastEvaluatedKey == nil {
			break
		}
		start = out.LastEvaluatedKey
	}
	require.Len(t, keys, 30, "every item of the partition, none of another")
	assert.Equal(t, "b/000", keys[0])
	assert.Equal(t, "b/029", keys[29])
}
