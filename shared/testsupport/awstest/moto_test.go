package awstest

import (
	"context"
	"os"
	"syscall"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

func TestSharedSpeaksSQSAndDynamoDBAndResets(t *testing.T) {
	ctx := context.Background()
	moto := Shared(t)
	q := sqs.NewFromConfig(moto.Config())
	db := dynamodb.NewFromConfig(moto.Config())

	_, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("probe.fifo"),
		Attributes: map[string]string{"FifoQueue": "true"}})
	require.NoError(t, err)
	_, err = db.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String("probe"),
		BillingMode:          ddbtypes.BillingModePayPerRequest,
		AttributeDefinitions: []ddbtypes.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: ddbtypes.ScalarAttributeTypeS}},
		KeySchema:            []ddbtypes.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: ddbtypes.KeyTypeHash}},
	})
	require.NoError(t, err)

	queues, err := q.ListQueues(ctx, &sqs.ListQueuesInput{})
	require.NoError(t, err)
	assert.Len(t, queues.QueueUrls, 1)

	// The next test sees an empty account.
	again := Shared(t)
	assert.Same(t, moto, again)
	queues, err = q.ListQueues(ctx, &sqs.ListQueuesInput{})
	require.NoError(t, err)
	assert.Empty(t, queues.QueueUrls)
	tables, err := db.ListTables(ctx, &dynamodb.ListTablesInput{})
	require.NoError(t, err)
	assert.Empty(t, tables.TableNames)
}

func TestStartAndStopByPID(t *testing.T) {
	m, err := Start(context.Background())
	require.NoError(t, err)
	pid := m.PID()
	require.NoError(t, syscall.Kill(pid, 0), "moto_server should be running")
	m.Stop()
	assert.ErrorIs(t, syscall.Kill(pid, 0), syscall.ESRCH, "moto_server should be gone after Stop")
}

func TestConfigPointsAtServer(t *testing.T) {
	m := &Moto{Endpoint: "http://127.0.0.1:1"}
	cfg := m.ConfigFor("eu-west-1")
	assert.Equal(t, "eu-west-1", cfg.Region)
	require.NotNil(t, cfg.BaseEndpoint)
	assert.Equal(t, "http://127.0.0.1:1", *cfg.BaseEndpoint)
	creds, err := cfg.Credentials.Retrieve(context.Background())
	require.NoError(t, err)
	assert.NotEmpty(t, creds.AccessKeyID)
}
