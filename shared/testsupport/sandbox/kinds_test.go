package sandbox

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/drain"
)

// Every interruption kind, published through EventBridge as AWS publishes it, against the node the
// inflate pods run on: disruptions replace the node and drain it, a terminated instance is cleaned up,
// a rebalance recommendation (default policy) changes nothing.
func TestEveryInterruptionKindEndToEnd(t *testing.T) {
	sb := start(t)
	ctx := context.Background()
	const replicas = 4
	setup, err := sb.ScaleUp(ctx, ScaleUpOptions{Replicas: replicas, Timeout: 2 * time.Minute})
	require.NoError(t, err)
	require.Equal(t, replicas, setup.PodsRunning)

	arn := func(id string) []string { return []string{"arn:aws:ec2:us-east-1:123456789012:instance/" + id} }
	current := func(t *testing.T) state.Claim {
		c, _, err := sb.busiestClaim(ctx, "default", "spot")
		require.NoError(t, err)
		return c
	}

	t.Run("rebalance recommendation: an event, nothing else", func(t *testing.T) {
		c := current(t)
		require.NoError(t, sb.PutEvent(ctx, "aws.ec2", "EC2 Instance Rebalance Recommendation", arn(c.InstanceID),
			map[string]string{"instance-id": c.InstanceID}))
		require.Eventually(t, func() bool {
			evs, err := sb.Client.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + c.NodeName})
			if err != nil {
				return false
			}
			for _, e := range evs.Items {
				if e.Reason == "SpotRebalanceRecommendation" {
					return true
				}
			}
			return false
		}, time.Minute, 250*time.Millisecond, "the recommendation is recorded on the Node")
		got, err := sb.Store.GetClaim(ctx, c.Name)
		require.NoError(t, err)
		assert.Equal(t, state.Initialized, got.Lifecycle, "event-only: the claim stays in service")
		node, err := sb.Client.CoreV1().Nodes().Get(ctx, c.NodeName, metav1.GetOptions{})
		require.NoError(t, err)
		for _, taint := range node.Spec.Taints {
			assert.NotEqual(t, drain.DisruptedTaintKey, taint.Key)
		}
	})

	disruptions := []struct {
		name, source, detailType string
		detail                   func(id string) any
	}{
		{"instance stopping", "aws.ec2", "EC2 Instance State-change Notification",
			func(id string) any { return map[string]string{"instance-id": id, "state": "stopping"} }},
		{"scheduled change (AWS Health)", "aws.health", "AWS Health Event", func(id string) any {
			start := time.Now().Add(24 * time.Hour).UTC()
			return map[string]any{"eventArn": "arn:aws:health:us-east-1::event/EC2/AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED/" + id,
				"service": "EC2", "eventTypeCode": "AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED", "eventTypeCategory": "scheduledChange",
				"statusCode": "upcoming", "startTime": start.Format(time.RFC1123), "endTime": start.Add(2 * time.Hour).Format(time.RFC1123),
				"affectedEntities": []map[string]string{{"entityValue": id, "status": "PENDING"}}}
		}},
		{"capacity reservation interruption", "aws.ec2", "EC2 Capacity Reservation Instance Interruption Warning", func(id string) any {
			return map[string]string{"instance-id": id, "instance-action": "terminate",
				"instance-termination-time": time.Now().Add(2 * time.Minute).UTC().Format(time.RFC3339)}
		}},
	}
	for _, d := range disruptions {
		t.Run(d.name+": replaced, drained, terminated", func(t *testing.T) {
			c := current(t)
			require.NoError(t, sb.PutEvent(ctx, d.source, d.detailType, arn(c.InstanceID), d.detail(c.InstanceID)))
			waitReplaced(t, sb, c, replicas)
		})
	}

	t.Run("instance terminated: cleaned up without a drain, pods come back", func(t *testing.T) {
		c := current(t)
		_, err := sb.EC2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{c.InstanceID}})
		require.NoError(t, err)
		require.NoError(t, sb.PutEvent(ctx, "aws.ec2", "EC2 Instance State-change Notification", arn(c.InstanceID),
			map[string]string{"instance-id": c.InstanceID, "state": "terminated"}))
		waitReplaced(t, sb, c, replicas)
	})

	capacity, err := sb.capacity(ctx)
	require.NoError(t, err)
	assert.Zero(t, capacity.LeakedInstances)
	assert.Empty(t, capacity.Leaks)
	assert.Positive(t, capacity.Nodes)
	t.Logf("after every kind: %d nodes (%v), $%.4f/h", capacity.Nodes, capacity.InstanceTypes, capacity.TotalPricePerHour)
	assert.Empty(t, sb.Errors())
}

// waitReplaced waits until c's Node and claim are gone and every inflate pod runs elsewhere.
func waitReplaced(t *testing.T, sb *Sandbox, c state.Claim, replicas int) {
	t.Helper()
	ctx := context.Background()
	var why string
	ok := assert.Eventually(t, func() bool {
		_, err := sb.Client.CoreV1().Nodes().Get(ctx, c.NodeName, metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			why = "node " + c.NodeName + " still there"
			return false
		}
		got, err := sb.Store.GetClaim(ctx, c.Name)
		if err != nil || got.Lifecycle != state.Deleted {
			why = fmt.Sprintf("claim %s is %s (%v)", c.Name, got.Lifecycle, err)
			return false
		}
		_, elsewhere, err := sb.inflateRunning(ctx, "default", c.NodeName)
		why = fmt.Sprintf("%d/%d pods running elsewhere (%v)", elsewhere, replicas, err)
		return err == nil && elsewhere == replicas
	}, 2*time.Minute, 250*time.Millisecond)
	if !ok {
		t.Log(why)
		dump(t, sb)
	}
}
