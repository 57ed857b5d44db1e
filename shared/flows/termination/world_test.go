package termination

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"

	"github.com/nodewright/nodewright/shared/adapters/footprint"
	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/testsupport/awscalls"
	"github.com/nodewright/nodewright/shared/testsupport/awstest"
	"github.com/nodewright/nodewright/shared/testsupport/kubetest"
)

const testCluster = "demo"

// world is one test's moto (state table, termination queue, the claim's instance) and local control
// plane (a Ready Node in a fresh namespace, a stand-in kubelet), with the Service wired to both.
type world struct {
	t        *testing.T
	ctx      context.Context
	kube     kubernetes.Interface
	ns, node string
	store    *state.Store
	sqs      *sqs.Client
	queueURL string
	// provisioningURL is the provisioner's FIFO queue the drain wakes.
	provisioningURL string
	ec2             *ec2.Client
	claim           string
	instance        string
	svc             *Service
	logs            *syncBuffer
	kubelet         *kubelet
	// stats adds up what every handled batch reported.
	stats BatchStats
}

type worldOptions struct {
	// grace is the NodePool's terminationGracePeriod ("" for none).
	grace string
	// actions wraps the real Actions (fault injection); nil uses them as they are.
	actions func(Actions) Actions
	// claim changes the claim record before it is stored (nil: initialized, naming the Node).
	claim func(*state.Claim)
}

func newWorld(t *testing.T, o worldOptions) *world {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	cfg := awstest.Shared(t).Config()
	cp := kubetest.Shared(t, kubetest.Options{Scheduler: true, ControllerManager: true})
	client, err := kube.NewClientset(cp.Config)
	require.NoError(t, err)
	w := &world{t: t, ctx: ctx, kube: client, ns: cp.Namespace(t), sqs: sqs.NewFromConfig(cfg), ec2: ec2.NewFromConfig(cfg),
		logs: &syncBuffer{}}
	w.node = kubetest.ReadyNode(t, client, w.ns+"-node", nil)
	w.claim = "default-" + w.ns[len(w.ns)-5:]

	db := state.NewClient(cfg)
	_, err = db.CreateTable(ctx, state.CreateTableInput("state"))
	require.NoError(t, err)
	w.store = state.New(db, "state")
	q, err := w.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("termination"),
		Attributes: map[string]string{"VisibilityTimeout": "2"}})
	require.NoError(t, err)
	w.queueURL = aws.ToString(q.QueueUrl)
	pq, err := w.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("provisioning-" + w.ns + ".fifo"),
		Attributes: map[string]string{"FifoQueue": "true"}})
	require.NoError(t, err)
	w.provisioningURL = aws.ToString(pq.QueueUrl)

	w.instance = w.launch(w.claim)
	claim := state.Claim{Name: w.claim, NodePool: "default", NodeClass: "default", Zone: "us-east-1a",
		Lifecycle: state.Initialized, InstanceID: w.instance, NodeName: w.node, ProviderID: "aws:///us-east-1a/" + w.instance}
	if o.claim != nil {
		o.claim(&claim)
	}
	_, err = w.store.CreateClaim(ctx, claim)
	require.NoError(t, err)
	np := apis.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	if o.grace != "" {
		g := apis.Duration(o.grace)
		np.Spec.Template.Spec.TerminationGracePeriod = &g
	}
	spec, err := json.Marshal(np)
	require.NoError(t, err)
	_, err = w.store.PutConfig(ctx, state.ConfigItem{Kind: state.KindNodePool, Name: "default", Spec: string(spec)})
	require.NoError(t, err)

	// The service acts as the termination function's own identity, with only its ClusterRole's rights.
	user := "arn:aws:sts::" + awstest.AccountID + ":assumed-role/nodewright-termination/test"
	require.NoError(t, footprint.Grant(ctx, client, footprint.Termination, user))
	fnClient, err := kube.NewClientset(cp.As(user, footprint.Termination.Group()))
	require.NoError(t, err)
	var actions Actions = kube.NewActions(fnClient)
	if o.actions != nil {
		actions = o.actions(actions)
	}
	// These tests are about the drain: a provisioning run has already placed the pods elsewhere (a mark
	// later than any drain start here), so the replacement gate is open; TestGate covers the gate.
	require.NoError(t, w.store.AdvanceMark(context.Background(), ReplacementMark, time.Now().Add(time.Hour)))
	// The function's own AWS clients: with $NODEWRIGHT_AWS_CALLS set their calls are recorded for infra's
	// IAM proof (the world's set-up and checks are not).
	fn := awscalls.Instrument(cfg, awscalls.Deployment{Cluster: testCluster, Account: awstest.AccountID, Table: "state",
		Manifests: awscalls.SampleManifests, Queues: map[string]string{"Termination": "termination", "Provisioning": "provisioning-" + w.ns + ".fifo",
			"DisruptionWake": "disruption-" + w.ns}}, // the queue TestRemovedClaimWakesTheDisruptionFunctionOnce creates
		"termination")
	w.svc = NewService(Config{QueueURL: w.queueURL, ProvisioningQueueURL: w.provisioningURL, ClusterName: testCluster, ProgressDelay: time.Second, BlockedDelay: 2 * time.Second,
		VolumeDetachWait: 3 * time.Second, Log: slog.New(slog.NewJSONHandler(w.logs, nil))},
		Deps{Store: state.New(state.NewClient(fn), "state"), Kube: fnClient, Actions: actions, Instances: instance.New(ec2.NewFromConfig(fn), testCluster),
			Events: kube.NewRecorder(fnClient, kube.RecorderOptions{Instance: "termination-test"}), Queue: sqs.NewFromConfig(fn), Now: time.Now})
	w.kubelet = startKubelet(t, client, w.node)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("service logs:\n%s", w.logs.String())
		}
	})
	return w
}

// launch starts an instance tagged as Nodewright tags a claim's instance.
func (w *world) launch(claim string) string {
	images, err := w.ec2.DescribeImages(w.ctx, &ec2.DescribeImagesInput{Owners: []string{"amazon"},
		Filters: []ec2types.Filter{{Name: aws.String("architecture"), Values: []string{"x86_64"}}}})
	require.NoError(w.t, err)
	require.NotEmpty(w.t, images.Images)
	tags := []ec2types.Tag{
		{Key: aws.String(instance.TagCluster), Value: aws.String(testCluster)},
		{Key: aws.String("kubernetes.io/cluster/" + testCluster), Value: aws.String("owned")},
		{Key: aws.String(instance.TagNodePool), Value: aws.String("default")},
		{Key: aws.String(instance.TagNodeClaim), Value: aws.String(claim)},
	}
	out, err := w.ec2.RunInstances(w.ctx, &ec2.RunInstancesInput{ImageId: images.Images[0].ImageId, MinCount: aws.Int32(1),
		MaxCount: aws.Int32(1), InstanceType: ec2types.InstanceTypeM5Large,
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeInstance, Tags: tags}}})
	require.NoError(w.t, err)
	return aws.ToString(out.Instances[0].InstanceId)
}

// request sends a termination request for the world's claim to the queue.
func (w *world) request(reason string, deadline *time.Time) Request {
	req := Request{Claim: w.claim, Reason: reason, Deadline: deadline, RequestedAt: time.Now().UTC(), Attempt: 1}
	body, err := req.Body()
	require.NoError(w.t, err)
	_, err = w.sqs.SendMessage(w.ctx, &sqs.SendMessageInput{QueueUrl: aws.String(w.queueURL), MessageBody: aws.String(body)})
	require.NoError(w.t, err)
	return req
}

// pumpOnce receives what the queue has (as the Lambda event source would), hands it to the Service and
// deletes what the Service acknowledged. It returns the batch and the response (empty when nothing came).
func (w *world) pumpOnce() (events.SQSEvent, events.SQSEventResponse) {
	out, err := w.sqs.ReceiveMessage(w.ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(w.queueURL),
		MaxNumberOfMessages: 10, WaitTimeSeconds: 1, MessageAttributeNames: []string{"All"},
		MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll}})
	require.NoError(w.t, err)
	if len(out.Messages) == 0 {
		return events.SQSEvent{}, events.SQSEventResponse{}
	}
	var ev events.SQSEvent
	for _, m := range out.Messages {
		rec := events.SQSMessage{MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle),
			Body: aws.ToString(m.Body), Attributes: m.Attributes, EventSource: "aws:sqs",
			MessageAttributes: map[string]events.SQSMessageAttribute{}}
		for k, a := range m.MessageAttributes {
			rec.MessageAttributes[k] = events.SQSMessageAttribute{StringValue: a.StringValue, DataType: aws.ToString(a.DataType)}
		}
		ev.Records = append(ev.Records, rec)
	}
	resp, stats := w.svc.Handle(w.ctx, ev)
	w.stats.addBatch(stats)
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
	return ev, resp
}

// pumpUntil pumps the queue until done holds, failing the test after timeout.
func (w *world) pumpUntil(timeout time.Duration, what string, done func() bool) {
	w.t.Helper()
	end := time.Now().Add(timeout)
	for !done() {
		if time.Now().After(end) {
			w.t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		w.pumpOnce()
	}
}

// pumpFor pumps the queue for d and returns how many messages were handled.
func (w *world) pumpFor(d time.Duration) int {
	n := 0
	for end := time.Now().Add(d); time.Now().Before(end); {
		ev, _ := w.pumpOnce()
		n += len(ev.Records)
	}
	return n
}

// claimIs reports whether the claim is in lifecycle l.
func (w *world) claimIs(l state.Lifecycle) bool {
	c, err := w.store.GetClaim(w.ctx, w.claim)
	require.NoError(w.t, err)
	return c.Lifecycle == l
}

// instanceState is what moto says about the claim's instance.
func (w *world) instanceState() string {
	out, err := w.ec2.DescribeInstances(w.ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{w.instance}})
	require.NoError(w.t, err)
	return string(out.Reservations[0].Instances[0].State.Name)
}

// podSpec is a small pod pinned to the world's Node by a node selector (kube-scheduler binds it).
func (w *world) podSpec(grace int64) corev1.PodSpec {
	return corev1.PodSpec{
		NodeSelector:                  map[string]string{corev1.LabelHostname: w.node},
		TerminationGracePeriodSeconds: &grace,
		Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}},
	}
}

// createPod creates a pod and returns its name.
func (w *world) createPod(p *corev1.Pod) string {
	p.Namespace = w.ns
	created, err := w.kube.CoreV1().Pods(w.ns).Create(w.ctx, p, metav1.CreateOptions{})
	require.NoError(w.t, err)
	return created.Name
}

// waitReady waits until n pods run Ready on the Node.
func (w *world) waitReady(n int) {
	w.t.Helper()
	require.Eventually(w.t, func() bool {
		list, err := w.kube.CoreV1().Pods(w.ns).List(w.ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		ready := 0
		for _, p := range list.Items {
			if p.Spec.NodeName == w.node && p.DeletionTimestamp == nil && isReady(&p) {
				ready++
			}
		}
		return ready == n
	}, time.Minute, 100*time.Millisecond, "%d pods bound and Ready on %s", n, w.node)
}

// events returns the reasons of the Events about object name in the namespace.
func (w *world) eventReasons(ns, name string) []string {
	list, err := w.kube.CoreV1().Events(ns).List(w.ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("involvedObject.name", name).String()})
	require.NoError(w.t, err)
	var out []string
	for _, e := range list.Items {
		out = append(out, e.Reason)
	}
	return out
}

// decisionKinds lists the claim's decision kinds, oldest first.
func (w *world) decisionKinds() []string {
	ds, err := w.store.Decisions(w.ctx, "nodeclaim/"+w.claim, 100)
	require.NoError(w.t, err)
	out := make([]string, len(ds))
	for i, d := range ds {
		out[len(ds)-1-i] = d.Kind
	}
	return out
}

// kubelet stands in for the Node's kubelet: it reports bound pods Running and Ready, and finishes the
// graceful deletion of pods being deleted, noting when it first saw each one go and with what grace.
type kubelet struct {
	mu      sync.Mutex
	leaving []string             // pod names in the order they started terminating
	at      map[string]time.Time // when each was first seen terminating
	// forced are the pods first seen terminating with a zero grace period: force-deleted, not evicted
	// or deleted by a drain. The API server writes a force delete in two steps (deletionTimestamp with
	// grace 0, then the removal), so a list between them shows the pod terminating.
	forced map[string]bool
}

func startKubelet(t *testing.T, c kubernetes.Interface, node string) *kubelet {
	k := &kubelet{at: map[string]time.Time{}, forced: map[string]bool{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			k.sync(ctx, c, node)
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return k
}

func (k *kubelet) sync(ctx context.Context, c kubernetes.Interface, node string) {
	list, err := c.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node).String()})
	if err != nil {
		return
	}
	for i := range list.Items {
		p := &list.Items[i]
		switch {
		case p.DeletionTimestamp != nil:
			k.mu.Lock()
			if _, seen := k.at[p.Name]; !seen {
				k.at[p.Name] = time.Now()
				k.leaving = append(k.leaving, p.Name)
				k.forced[p.Name] = p.DeletionGracePeriodSeconds != nil && *p.DeletionGracePeriodSeconds == 0
			}
			k.mu.Unlock()
			zero := int64(0)
			_ = c.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
		case !isReady(p):
			p.Status.Phase = corev1.PodRunning
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
			if p.Status.StartTime == nil {
				started := metav1.Now() // as a kubelet records it; a do-not-disrupt duration counts from it
				p.Status.StartTime = &started
			}
			_, _ = c.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{})
		}
	}
}

// left returns the pods in the order they started terminating, and when each did.
func (k *kubelet) left() ([]string, map[string]time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	at := make(map[string]time.Time, len(k.at))
	for n, t := range k.at {
		at[n] = t
	}
	return append([]string(nil), k.leaving...), at
}

// drained returns the pods that left gracefully (evicted, or deleted with a grace period), in order;
// force-deleted pods are not among them.
func (k *kubelet) drained() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []string
	for _, n := range k.leaving {
		if !k.forced[n] {
			out = append(out, n)
		}
	}
	return out
}

func isReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// syncBuffer is a bytes.Buffer safe for the Service's concurrent log writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// addBatch adds another batch's stats to b.
func (b *BatchStats) addBatch(o BatchStats) {
	if b.Drained == nil {
		*b = newBatchStats()
	}
	for k, v := range o.Drained {
		b.Drained[k] += v
	}
	for k, v := range o.PodsDrained {
		b.PodsDrained[k] += v
	}
	for k, v := range o.Evictions {
		b.Evictions[k] += v
	}
	b.Terminated = append(b.Terminated, o.Terminated...)
	b.Redriven += o.Redriven
}
