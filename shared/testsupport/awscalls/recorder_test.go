package awscalls_test

import (
	"context"
	"os"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/testsupport/awscalls"
	"github.com/nodewright/nodewright/shared/testsupport/awstest"
)

func TestMain(m *testing.M) { os.Exit(awstest.Main(m)) }

// TestRecordsWhatIAMAuthorises makes real calls to moto through an instrumented configuration and reads
// back what was recorded: per-item transaction writes, BatchWriteItem per table, queue ARNs from URLs,
// instance ARNs with the instance's real tags, and nothing for unlabelled calls.
func TestRecordsWhatIAMAuthorises(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(awscalls.EnvDir, dir)
	ctx := context.Background()
	moto := awstest.Shared(t)
	plain := moto.Config()
	d := awscalls.Deployment{Cluster: "prod", Account: awstest.AccountID, Table: "calls", Manifests: "# none"}
	cfg := awscalls.Instrument(plain, d, "")
	fn := awscalls.WithFunction(ctx, "termination")

	db := dynamodb.NewFromConfig(plain)
	_, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{TableName: aws.String("calls"), BillingMode: ddbtypes.BillingModePayPerRequest,
		AttributeDefinitions: []ddbtypes.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: ddbtypes.ScalarAttributeTypeS}},
		KeySchema:            []ddbtypes.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: ddbtypes.KeyTypeHash}}})
	require.NoError(t, err)
	item := func(pk string) map[string]ddbtypes.AttributeValue {
		return map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: pk}}
	}
	rec := dynamodb.NewFromConfig(cfg)
	_, err = rec.TransactWriteItems(fn, &dynamodb.TransactWriteItemsInput{TransactItems: []ddbtypes.TransactWriteItem{
		{Put: &ddbtypes.Put{TableName: aws.String("calls"), Item: item("a")}},
		{Delete: &ddbtypes.Delete{TableName: aws.String("calls"), Key: item("b")}},
	}})
	require.NoError(t, err)
	_, err = rec.BatchWriteItem(fn, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]ddbtypes.WriteRequest{
		"calls": {{PutRequest: &ddbtypes.PutRequest{Item: item("c")}}}}})
	require.NoError(t, err)
	_, err = rec.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("calls"), Key: item("a")}) // unlabelled: set-up
	require.NoError(t, err)

	q, err := sqs.NewFromConfig(plain).CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("calls")})
	require.NoError(t, err)
	_, err = sqs.NewFromConfig(cfg).SendMessageBatch(fn, &sqs.SendMessageBatchInput{QueueUrl: q.QueueUrl,
		Entries: []sqstypes.SendMessageBatchRequestEntry{{Id: aws.String("1"), MessageBody: aws.String("x")}}})
	require.NoError(t, err)

	e := ec2.NewFromConfig(plain)
	images, err := e.DescribeImages(ctx, &ec2.DescribeImagesInput{Owners: []string{"amazon"}})
	require.NoError(t, err)
	require.NotEmpty(t, images.Images)
	run, err := e.RunInstances(ctx, &ec2.RunInstancesInput{ImageId: images.Images[0].ImageId, MinCount: aws.Int32(1), MaxCount: aws.Int32(1),
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeInstance,
			Tags: []ec2types.Tag{{Key: aws.String("nodewright.sh/cluster"), Value: aws.String("prod")}}}}})
	require.NoError(t, err)
	id := aws.ToString(run.Instances[0].InstanceId)
	_, err = ec2.NewFromConfig(awscalls.Instrument(plain, d, "lifecycle")).TerminateInstances(ctx,
		&ec2.TerminateInstancesInput{InstanceIds: []string{id}})
	require.NoError(t, err)

	plainIAM := iam.NewFromConfig(plain)
	_, err = plainIAM.CreateInstanceProfile(ctx, &iam.CreateInstanceProfileInput{InstanceProfileName: aws.String("nodewright_prod_1"),
		Tags: []iamtypes.Tag{{Key: aws.String("nodewright.sh/cluster"), Value: aws.String("prod")}}})
	require.NoError(t, err)
	_, err = plainIAM.CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String("node"), AssumeRolePolicyDocument: aws.String(`{"Version":"2012-10-17","Statement":[]}`)})
	require.NoError(t, err)
	_, err = iam.NewFromConfig(cfg).AddRoleToInstanceProfile(fn, &iam.AddRoleToInstanceProfileInput{
		InstanceProfileName: aws.String("nodewright_prod_1"), RoleName: aws.String("node")})
	require.NoError(t, err)

	calls, err := awscalls.ReadDir(dir)
	require.NoError(t, err)
	deployments, err := awscalls.ReadDeployments(dir)
	require.NoError(t, err)
	assert.Equal(t, map[string]awscalls.Deployment{d.ID(): d}, deployments)
	var got []string
	for _, c := range calls {
		for _, ch := range c.Checks {
			assert.Equal(t, d.ID(), c.Deployment)
			got = append(got, c.Function+" "+c.Operation+": "+ch.String())
		}
	}
	table := "arn:aws:dynamodb:us-east-1:123456789012:table/calls"
	assert.Equal(t, []string{
		"termination TransactWriteItems: dynamodb:PutItem on " + table,
		"termination TransactWriteItems: dynamodb:DeleteItem on " + table,
		"termination BatchWriteItem: dynamodb:BatchWriteItem on " + table,
		"termination SendMessageBatch: sqs:SendMessage on arn:aws:sqs:us-east-1:123456789012:calls",
		"lifecycle TerminateInstances: ec2:TerminateInstances on arn:aws:ec2:us-east-1:123456789012:instance/" + id +
			" [aws:ResourceTag/nodewright.sh/cluster=prod]",
		"termination AddRoleToInstanceProfile: iam:AddRoleToInstanceProfile on arn:aws:iam::123456789012:instance-profile/nodewright_prod_1" +
			" [aws:ResourceTag/nodewright.sh/cluster=prod]",
		"termination AddRoleToInstanceProfile: iam:PassRole on arn:aws:iam::123456789012:role/node [iam:PassedToService=ec2.amazonaws.com]",
	}, got)
}
