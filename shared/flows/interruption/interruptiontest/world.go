// Package interruptiontest builds what the interruption service's tests run against: the state table and
// the provisioning and termination queues in moto, claims as the provisioner and lifecycle leave them,
// and SQS batches made of the events/ samples.
package interruptiontest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/testsupport/awscalls"
	"github.com/nodewright/nodewright/shared/testsupport/awstest"
)

// Cluster is the cluster name of the test world.
const Cluster = "demo"

// Clock is a settable clock for the state store, so a test can let a processing window pass.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// World is a fresh moto with the state table and both queues.
type World struct {
	Store *state.Store
	// Clock is the store's clock; it starts at the current time.
	Clock *Clock
	// Config points AWS clients at the world's moto.
	Config aws.Config
	SQS    *sqs.Client
	// FunctionStore and FunctionSQS are the interruption function's own clients of the same table and
	// queues: with $NODEWRIGHT_AWS_CALLS set their calls are recorded for infra's IAM proof, while the
	// test's own set-up and checks (Store, SQS) are not.
	FunctionStore *state.Store
	FunctionSQS   *sqs.Client
	// FunctionEC2 is the function's EC2 client (recorded like FunctionStore).
	FunctionEC2 *ec2.Client
	// ProvisioningURL is the FIFO queue, TerminationURL the standard queue; InterruptionURL is the
	// function's own queue, dead-lettering to InterruptionDeadLetterURL after MaxReceiveCount receives
	// as infra/queues.go sets it up.
	ProvisioningURL, TerminationURL            string
	InterruptionURL, InterruptionDeadLetterURL string
}

// MaxReceiveCount is the interruption queue's maxReceiveCount (infra/queues.go).
const MaxReceiveCount = 5

// NewWorld resets the shared moto and creates the table and queues in it.
func NewWorld(t testing.TB) *World {
	t.Helper()
	ctx := context.Background()
	moto := awstest.Shared(t)
	cfg := moto.Config()
	db := state.NewClient(cfg)
	_, err := db.CreateTable(ctx, state.CreateTableInput("state"))
	var inUse *ddbtypes.ResourceInUseException
	if errors.As(err, &inUse) {
		// The SDK retried a CreateTable whose first answer was lost (moto on a loaded machine); the reset
		// above emptied moto, so the table is the one this call made.
		err = nil
	}
	require.NoError(t, err)
	w := &World{Clock: &Clock{t: time.Now()}, Config: cfg, SQS: sqs.NewFromConfig(cfg)}
	w.Store = state.New(db, "state", state.WithClock(w.Clock.Now))
	fifo, err := w.SQS.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("provisioning.fifo"),
		Attributes: map[string]string{"FifoQueue": "true"}})
	require.NoError(t, err)
	std, err := w.SQS.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("termination")})
	require.NoError(t, err)
	w.ProvisioningURL, w.TerminationURL = aws.ToString(fifo.QueueUrl), aws.ToString(std.QueueUrl)
	dlq, err := w.SQS.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("interruption-dead-letter")})
	require.NoError(t, err)
	w.InterruptionDeadLetterURL = aws.ToString(dlq.QueueUrl)
	redrive := fmt.Sprintf(`{"deadLetterTargetArn":"arn:aws:sqs:%s:%s:interruption-dead-letter","maxReceiveCount":%d}`,
		cfg.Region, awstest.AccountID, MaxReceiveCount)
	own, err := w.SQS.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("interruption"),
		Attributes: map[string]string{"RedrivePolicy": redrive}})
	require.NoError(t, err)
	w.InterruptionURL = aws.ToString(own.QueueUrl)
	fn := awscalls.Instrument(cfg, awscalls.Deployment{Cluster: Cluster, Account: awstest.AccountID, Table: "state", Manifests: awscalls.SampleManifests,
		Queues: map[string]string{"Provisioning": "provisioning.fifo", "Termination": "termination", "Interruption": "interruption"}}, "interruption")
	w.FunctionStore, w.FunctionSQS = state.New(state.NewClient(fn), "state", state.WithClock(w.Clock.Now)), sqs.NewFromConfig(fn)
	w.FunctionEC2 = ec2.NewFromConfig(fn)
	return w
}

// LaunchInstance starts an instance in moto tagged as Nodewright tags claim's instance in this cluster,
// and returns its id.
func (w *World) LaunchInstance(t testing.TB, claim string) string {
	t.Helper()
	ctx := context.Background()
	c := ec2.NewFromConfig(w.Config)
	images, err := c.DescribeImages(ctx, &ec2.DescribeImagesInput{Owners: []string{"amazon"},
		Filters: []ec2types.Filter{{Name: aws.String("architecture"), Values: []string{"x86_64"}}}})
	require.NoError(t, err)
	require.NotEmpty(t, images.Images)
	tags := []ec2types.Tag{
		{Key: aws.String(instance.TagCluster), Value: aws.String(Cluster)},
		{Key: aws.String(instance.TagNodePool), Value: aws.String("default")},
		{Key: aws.String(instance.TagNodeClaim), Value: aws.String(claim)},
	}
	out, err := c.RunInstances(ctx, &ec2.RunInstancesInput{ImageId: images.Images[0].ImageId, MinCount: aws.Int32(1),
		MaxCount: aws.Int32(1), InstanceType: ec2types.InstanceTypeM5Large,
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeInstance, Tags: tags}}})
	require.NoError(t, err)
	return aws.ToString(out.Instances[0].InstanceId)
}

// Drain receives and deletes every message of the queue and returns their bodies.
func (w *World) Drain(t testing.TB, url string) []string {
	t.Helper()
	ctx := context.Background()
	var bodies []string
	for {
		out, err := w.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10,
			WaitTimeSeconds: 0, VisibilityTimeout: 30})
		require.NoError(t, err)
		if len(out.Messages) == 0 {
			return bodies
		}
		for _, m := range out.Messages {
			bodies = append(bodies, aws.ToString(m.Body))
			_, err := w.SQS.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle})
			require.NoError(t, err)
		}
	}
}

// ClaimOptions describe a claim that has come as far as initialized.
type ClaimOptions struct {
	Name, InstanceID, InstanceType, Zone, CapacityType, NodeName string
	// ReservationID, when set, is the capacity reservation the instance runs in (its claim's label).
	ReservationID string
}

// InitializedClaim writes a claim and moves it through launched and registered to initialized, as the
// provisioner and the lifecycle function would.
func (w *World) InitializedClaim(t testing.TB, o ClaimOptions) state.Claim {
	t.Helper()
	ctx := context.Background()
	_, err := w.Store.CreateClaim(ctx, state.Claim{Name: o.Name, NodePool: "default", NodeClass: "default",
		InstanceTypes: []string{o.InstanceType}, Requests: map[string]string{"cpu": "1"}})
	require.NoError(t, err)
	var c state.Claim
	for _, step := range []func(*state.Claim){
		func(c *state.Claim) {
			c.Lifecycle, c.InstanceID, c.InstanceType, c.Zone, c.CapacityType = state.Launched, o.InstanceID, o.InstanceType, o.Zone, o.CapacityType
			c.ProviderID = fmt.Sprintf("aws:///%s/%s", o.Zone, o.InstanceID)
			if o.ReservationID != "" {
				c.Labels = map[string]string{apis.LabelCapacityReservationID: o.ReservationID}
			}
		},
		func(c *state.Claim) { c.Lifecycle, c.NodeName = state.Registered, o.NodeName },
		func(c *state.Claim) { c.Lifecycle = state.Initialized },
	} {
		c, err = w.Store.UpdateClaim(ctx, o.Name, func(c *state.Claim) error { step(c); return nil })
		require.NoError(t, err)
	}
	return c
}

// EventsDir is the repository's events/ folder, relative to a package two levels below the root.
func EventsDir(levels int) string {
	dir := "events"
	for i := 0; i < levels; i++ {
		dir = filepath.Join("..", dir)
	}
	return dir
}

// Sample reads one events/ file.
func Sample(t testing.TB, eventsDir, name string) []byte {
	t.Helper()
	body, err := os.ReadFile(filepath.Join(eventsDir, name))
	require.NoError(t, err)
	return body
}

// Batch wraps message bodies into a Lambda SQS event, one record each, with message ids prefix-0,
// prefix-1, ...
func Batch(prefix string, bodies ...[]byte) events.SQSEvent {
	var ev events.SQSEvent
	for i, b := range bodies {
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: fmt.Sprintf("%s-%d", prefix, i), Body: string(b),
			EventSource: "aws:sqs", EventSourceARN: "arn:aws:sqs:us-east-1:123456789012:interruption"})
	}
	return ev
}
