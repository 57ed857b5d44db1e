package faults

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dynamodbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/testsupport/awstest"
)

// awsConfig is moto's configuration with the fault layer on its HTTP client; attempts 1 turns the
// SDK's retries off.
func awsConfig(t *testing.T, inj *Injector, attempts int) aws.Config {
	cfg := awstest.Shared(t).Config()
	cfg.HTTPClient = inj.AWSClient(cfg.HTTPClient, nil)
	if attempts > 0 {
		cfg.RetryMaxAttempts = attempts
	}
	return cfg
}

func injector(t *testing.T, rules ...Rule) *Injector {
	inj, err := New(42, rules...)
	require.NoError(t, err)
	return inj
}

// Each service's throttling error, in its own protocol, is one the SDK retries: the call succeeds on
// its second attempt.
func TestAWSThrottlingIsRetriedBySDK(t *testing.T) {
	ctx := context.Background()
	inj := injector(t, Rule{Target: AWS, Kind: Throttle, Probability: 1, Limit: 1})
	cfg := awsConfig(t, inj, 0)
	for _, tc := range []struct {
		service string
		call    func() (any, error)
	}{
		{"EC2", func() (any, error) { return ec2.NewFromConfig(cfg).DescribeVpcs(ctx, &ec2.DescribeVpcsInput{}) }},
		{"DynamoDB", func() (any, error) { return dynamodb.NewFromConfig(cfg).ListTables(ctx, &dynamodb.ListTablesInput{}) }},
		{"SQS", func() (any, error) { return sqs.NewFromConfig(cfg).ListQueues(ctx, &sqs.ListQueuesInput{}) }},
		{"IAM", func() (any, error) { return iam.NewFromConfig(cfg).ListRoles(ctx, &iam.ListRolesInput{}) }},
		{"SSM", func() (any, error) {
			return ssm.NewFromConfig(cfg).DescribeParameters(ctx, &ssm.DescribeParametersInput{})
		}},
	} {
		require.NoError(t, inj.Arm(Rule{Target: AWS, Service: tc.service, Kind: Throttle, Probability: 1, Limit: 1}))
		out, err := tc.call()
		require.NoError(t, err, tc.service)
		attempts, ok := retry.GetAttemptResults(resultMetadata(out))
		require.True(t, ok, tc.service)
		assert.Len(t, attempts.Results, 2, "%s: a throttled attempt, then a good one", tc.service)
	}
	assert.Equal(t, 5, inj.Stats().Injected["aws/throttle"])
}

// Without retries the injected errors surface as the errors the code expects from each service.
func TestAWSFaultsSurfaceAsServiceErrors(t *testing.T) {
	ctx := context.Background()
	inj := injector(t)
	cfg := awsConfig(t, inj, 1)
	code := func(err error) string {
		var api smithy.APIError
		if errors.As(err, &api) {
			return api.ErrorCode()
		}
		return ""
	}
	require.NoError(t, inj.Arm(Rule{Target: AWS, Kind: Throttle, Probability: 1}))
	_, err := ec2.NewFromConfig(cfg).DescribeVpcs(ctx, &ec2.DescribeVpcsInput{})
	assert.Equal(t, "RequestLimitExceeded", code(err))
	assert.Equal(t, 503, statusOf(err))
	_, err = dynamodb.NewFromConfig(cfg).GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("t"),
		Key: map[string]dynamodbtypes.AttributeValue{"pk": &dynamodbtypes.AttributeValueMemberS{Value: "x"}}})
	var pte *dynamodbtypes.ProvisionedThroughputExceededException
	assert.ErrorAs(t, err, &pte)
	_, err = sqs.NewFromConfig(cfg).ListQueues(ctx, &sqs.ListQueuesInput{})
	assert.Equal(t, "RequestThrottled", code(err))
	_, err = iam.NewFromConfig(cfg).ListRoles(ctx, &iam.ListRolesInput{})
	assert.Equal(t, "Throttling", code(err))
	for _, e := range []error{err} {
		assert.True(t, IsInjected(e), "the message carries the marker: %v", e)
		assert.Equal(t, aws.TrueTernary, retry.DefaultThrottles[0].IsErrorThrottle(e), "the SDK sees a throttle")
	}

	require.NoError(t, inj.Arm(Rule{Target: AWS, Kind: ServerError, Probability: 1}))
	_, err = ec2.NewFromConfig(cfg).DescribeVpcs(ctx, &ec2.DescribeVpcsInput{})
	assert.Equal(t, "InternalError", code(err))
	assert.Equal(t, 500, statusOf(err))
	_, err = dynamodb.NewFromConfig(cfg).ListTables(ctx, &dynamodb.ListTablesInput{})
	assert.Equal(t, 500, statusOf(err))
	assert.Equal(t, aws.TrueTernary, retry.RetryableHTTPStatusCode{Codes: retry.DefaultRetryableHTTPStatusCodes}.IsErrorRetryable(err))

	require.NoError(t, inj.Arm(Rule{Target: AWS, Kind: Drop, Probability: 1}))
	_, err = sqs.NewFromConfig(cfg).ListQueues(ctx, &sqs.ListQueuesInput{})
	assert.ErrorIs(t, err, syscall.ECONNRESET)
	assert.True(t, IsInjected(err))
	assert.Equal(t, aws.TrueTernary, retry.RetryableConnectionError{}.IsErrorRetryable(err), "the SDK would retry it")
}

func statusOf(err error) int {
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

// A dropped CreateFleet never reaches EC2: retried, it launches one instance, not two.
func TestAWSDroppedCreateFleetIsNotForwarded(t *testing.T) {
	ctx := context.Background()
	inj := injector(t)
	cfg := awsConfig(t, inj, 1)
	e := ec2.NewFromConfig(cfg)
	before := countInstances(t, e)
	require.NoError(t, inj.Arm(Rule{Target: AWS, Service: "EC2", Operation: "RunInstances", Kind: Drop, Probability: 1}))
	_, err := e.RunInstances(ctx, &ec2.RunInstancesInput{ImageId: aws.String("ami-12c6146b"), MinCount: aws.Int32(1), MaxCount: aws.Int32(1)})
	require.Error(t, err)
	inj.Disarm()
	assert.Equal(t, before, countInstances(t, e), "nothing launched")
	assert.Equal(t, 1, inj.Stats().Injected["aws/dropped-connection"])
}

func countInstances(t *testing.T, e *ec2.Client) int {
	out, err := e.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{})
	require.NoError(t, err)
	n := 0
	for _, r := range out.Reservations {
		n += len(r.Instances)
	}
	return n
}

func TestAWSLatencyDelaysAndExemptCallsPass(t *testing.T) {
	ctx := context.Background()
	inj := injector(t, Rule{Target: AWS, Kind: Latency, Probability: 1, Delay: 300 * time.Millisecond})
	cfg := awsConfig(t, inj, 1)
	start := time.Now()
	_, err := sqs.NewFromConfig(cfg).ListQueues(ctx, &sqs.ListQueuesInput{})
	require.NoError(t, err)
	assert.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond)

	require.NoError(t, inj.Arm(Rule{Target: AWS, Kind: Drop, Probability: 1}))
	_, err = sqs.NewFromConfig(cfg).ListQueues(Exempt(ctx), &sqs.ListQueuesInput{})
	require.NoError(t, err, "an exempt call passes")
	only := awstest.Shared(t).Config()
	only.RetryMaxAttempts = 1
	only.HTTPClient = inj.AWSClient(nil, func(context.Context) bool { return false })
	_, err = sqs.NewFromConfig(only).ListQueues(ctx, &sqs.ListQueuesInput{})
	require.NoError(t, err, "an ineligible call passes")
	assert.Equal(t, 1, inj.Stats().Calls[AWS], "only the latency call was counted")
}

func resultMetadata(out any) (md middlewareMetadata) {
	switch o := out.(type) {
	case *ec2.DescribeVpcsOutput:
		return o.ResultMetadata
	case *dynamodb.ListTablesOutput:
		return o.ResultMetadata
	case *sqs.ListQueuesOutput:
		return o.ResultMetadata
	case *iam.ListRolesOutput:
		return o.ResultMetadata
	case *ssm.DescribeParametersOutput:
		return o.ResultMetadata
	}
	return md
}

type middlewareMetadata = middleware.Metadata
