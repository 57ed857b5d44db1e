package e2e

import (
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/settings"
	"github.com/nodewright/nodewright/shared/flows/disruptionrun"
	"github.com/nodewright/nodewright/shared/flows/provisioning"
	"github.com/nodewright/nodewright/shared/flows/termination"
)

// fixedPool is a static NodePool of %d replicas whose budget lets every node go at once.
const fixedPool = `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: fixed}
spec:
  replicas: %d
  disruption:
    budgets: [{nodes: "100%%"}]
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: kubernetes.io/arch, operator: In, values: ["amd64"]}
        - {key: karpenter.k8s.aws/instance-category, operator: In, values: ["m"]}
        - {key: karpenter.sh/capacity-type, operator: In, values: ["on-demand"]}
`

// applyFixed stores the static pool with replicas as `nodewright apply` does (defaulted, validated).
func (w *world) applyFixed(replicas int) {
	w.t.Helper()
	objs, err := apis.Decode("fixed.yaml", []byte(fmt.Sprintf(fixedPool, replicas)))
	require.NoError(w.t, err)
	require.Empty(w.t, apis.DefaultAndValidate(objs))
	items, err := state.ConfigItemsFrom(objs)
	require.NoError(w.t, err)
	_, err = w.store.ApplyConfig(w.ctx, items, false)
	require.NoError(w.t, err)
}

// terminationService is the termination function's service over the world's queue, acting with the
// API server's admin rights (the RBAC is proven in shared/flows/termination's own tests).
func (w *world) terminationService() *termination.Service {
	w.t.Helper()
	pq, err := w.sqs.CreateQueue(w.ctx, &sqs.CreateQueueInput{QueueName: aws.String("provisioning-" + w.ns + ".fifo"),
		Attributes: map[string]string{"FifoQueue": "true"}})
	require.NoError(w.t, err)
	return termination.NewService(termination.Config{QueueURL: w.queueURL, ProvisioningQueueURL: aws.ToString(pq.QueueUrl),
		ClusterName: cluster, ProgressDelay: time.Second, BlockedDelay: 2 * time.Second, Log: slog.New(slog.NewJSONHandler(os.Stderr, nil))},
		termination.Deps{Store: w.store, Kube: w.client, Instances: instance.New(w.ec2, cluster),
			Events: kube.NewRecorder(w.client, kube.RecorderOptions{Instance: "termination-e2e"}), Queue: w.sqs, Now: time.Now})
}

// pumpTermination hands what the termination queue holds to svc, as the Lambda event source would,
// until done holds; the test fails after timeout.
func (w *world) pumpTermination(svc *termination.Service, timeout time.Duration, what string, done func() bool) {
	w.t.Helper()
	for end := time.Now().Add(timeout); !done(); {
		require.False(w.t, time.Now().After(end), "timed out after %s waiting for %s", timeout, what)
		out, err := w.sqs.ReceiveMessage(w.ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(w.queueURL), MaxNumberOfMessages: 10,
			WaitTimeSeconds: 1, MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll}})
		require.NoError(w.t, err)
		if len(out.Messages) == 0 {
			continue
		}
		var ev events.SQSEvent
		for _, m := range out.Messages {
			ev.Records = append(ev.Records, events.SQSMessage{MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle),
				Body: aws.ToString(m.Body), Attributes: m.Attributes, EventSource: "aws:sqs"})
		}
		resp := svc.HandleBatch(w.ctx, ev)
		failed := map[string]bool{}
		for _, f := range resp.BatchItemFailures {
			failed[f.ItemIdentifier] = true
		}
		for _, rec := range ev.Records {
			if !failed[rec.MessageId] {
				_, err := w.sqs.DeleteMessage(w.ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(w.queueURL), ReceiptHandle: aws.String(rec.ReceiptHandle)})
				require.NoError(w.t, err)
			}
		}
	}
}

// TestLoweringStaticReplicasRemovesTheSurplusThroughTermination: a static pool of 3 nodes launched into
// moto by a provisioning run, their Nodes joined to the real API server (one runs a pod), is lowered to 1
// replica as `nodewright apply` stores it. The next disruption run removes two nodes, the empty ones, in
// one Overprovisioned command with no replacement: tainted, recorded under each node and claim, and
// handed to the termination flow, which drains them, terminates their instances and deletes their Nodes.
// The busy node stays; the pool counts 1 node; the next provisioning run launches nothing and the next
// disruption run removes nothing more.
func TestLoweringStaticReplicasRemovesTheSurplusThroughTermination(t *testing.T) {
	w := newWorld(t, "100%")
	set := settings.Default()
	set.FeatureGates.StaticCapacity = true
	item, err := state.SettingsItem(set)
	require.NoError(t, err)
	_, err = w.store.PutConfig(w.ctx, item)
	require.NoError(t, err)
	w.applyFixed(3)

	up, err := w.prov.Run(w.ctx, "static-up")
	require.NoError(t, err)
	require.Len(t, up.Claims, 3, "static: %v errors: %v", up.Static, up.Errors)
	nodes := map[string]string{} // claim → Node
	for _, c := range up.Claims {
		nodes[c.Name] = w.join(c.Name)
	}
	busyClaim := up.Claims[1].Name
	w.pod("web", nodes[busyClaim], "100m", nil)

	w.applyFixed(1)
	rep, err := w.runner("", nil).Run(w.ctx, "static-down")
	require.NoError(t, err)
	require.Len(t, rep.Commands, 1, "static: %v errors: %v rejected: %v", rep.StaticScaleDown, rep.Errors, rep.Rejected)
	cmd := rep.Commands[0]
	assert.Equal(t, disruptionrun.ReasonOverprovisioned, cmd.Reason)
	assert.Empty(t, cmd.Replacements)
	require.Len(t, cmd.Nodes, 2)
	var gone []string
	for _, n := range cmd.Nodes {
		assert.NotEqual(t, busyClaim, n.Claim, "the busy node is the one kept")
		assert.True(t, w.tainted(n.Name))
		gone = append(gone, n.Claim)
		for _, subject := range []string{"node/" + n.Name, "nodeclaim/" + n.Claim} {
			ds, err := w.store.Decisions(w.ctx, subject, 10)
			require.NoError(t, err)
			kinds := []string{}
			for _, d := range ds {
				kinds = append(kinds, d.Kind)
			}
			assert.Contains(t, kinds, disruptionrun.KindDisrupt, subject)
		}
	}

	// A provisioning run now launches nothing: the pool's count is kept by the nodes going.
	again, err := w.prov.Run(w.ctx, "static-handed-over")
	require.NoError(t, err)
	assert.Empty(t, again.Claims)
	// The termination flow starts draining both; it evicts once a provisioning run that began after the
	// drain started has finished (its replacement gate), and that run launches nothing either.
	svc := w.terminationService()
	w.pumpTermination(svc, 60*time.Second, "both surplus claims draining", func() bool {
		return !w.claim(gone[0]).Lifecycle.InService() && !w.claim(gone[1]).Lifecycle.InService()
	})
	draining, err := w.prov.Run(w.ctx, "static-draining")
	require.NoError(t, err)
	assert.Empty(t, draining.Claims, "static: %v", draining.Static)
	w.pumpTermination(svc, 90*time.Second, "both surplus claims removed", func() bool {
		return w.claim(gone[0]).Lifecycle == state.Deleted && w.claim(gone[1]).Lifecycle == state.Deleted
	})
	for _, n := range cmd.Nodes {
		_, err := w.client.CoreV1().Nodes().Get(w.ctx, n.Name, metav1.GetOptions{})
		assert.True(t, apierrors.IsNotFound(err), "node %s deleted after its drain: %v", n.Name, err)
		assert.NotEmpty(t, w.claim(n.Claim).DisruptionReason, "claim %s records why it went", n.Claim)
	}
	running := w.claimedInstances()
	assert.True(t, running[busyClaim])
	assert.False(t, running[gone[0]])
	assert.False(t, running[gone[1]])
	claims, err := w.store.ListClaims(w.ctx)
	require.NoError(t, err)
	assert.EqualValues(t, 1, provisioning.CountStatic(claims, "fixed").Active)

	last, err := w.runner("", nil).Run(w.ctx, "static-settled")
	require.NoError(t, err)
	assert.Empty(t, last.StaticScaleDown)
	commands, err := w.store.ListDisruptionCommands(w.ctx)
	require.NoError(t, err)
	require.Len(t, commands, 1)
	assert.Equal(t, state.CommandDone, commands[0].Phase, "advanced: %v", last.Advanced)
	assert.Equal(t, string(disruptionrun.MethodStaticScaleDown), commands[0].Method)
}
