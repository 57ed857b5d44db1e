package footprint

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/nodewright/nodewright/shared/adapters/crash"
	"github.com/nodewright/nodewright/shared/testsupport/kubetest"
)

// matchEvaluationMetric is kube-apiserver's histogram of the time it takes to evaluate a webhook's match
// conditions. It observes the evaluations that filter an Event out (or fail), not those that let it
// through, so it measures what the conditions cost the cluster's other Events.
const matchEvaluationMetric = "apiserver_admission_match_condition_evaluation_seconds"

// BenchmarkMatchConditionsOnFilteredEvents measures, with kube-apiserver's own histogram, how long its
// evaluation of the webhook's match conditions takes for an Event they filter out: a kubelet's Pulled
// Event (as nearly every Event in a cluster is) and Nodewright's own FailedScheduling Event. Each
// iteration creates 1,000 Events from 8 writers; us/evaluation is the histogram's mean over them (wall
// time inside the API server, so a busy machine inflates it: compare runs made one after the other).
//
//	go test ./shared/adapters/footprint -run '^$' -bench MatchConditionsOnFilteredEvents -benchtime 3x
func BenchmarkMatchConditionsOnFilteredEvents(b *testing.B) {
	ctx := context.Background()
	cp := kubetest.Shared(b, kubetest.Options{})
	ns := cp.Namespace(b)
	h := serveCostHook(b, 0, false)
	h.register(ctx, b, cp.Client, ns)
	cases := []struct {
		name  string
		event func(name string, uid types.UID) *corev1.Event
	}{
		{name: "kubelet-pulled", event: func(name string, uid types.UID) *corev1.Event {
			return &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: name},
				InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: name, UID: uid, FieldPath: "spec.containers{app}"},
				Reason:         "Pulled", Message: `Successfully pulled image "public.ecr.aws/eks-distro/kubernetes/pause:3.7" in 1.2s`,
				Type: corev1.EventTypeNormal, Source: corev1.EventSource{Component: "kubelet", Host: "ip-10-0-0-1.ec2.internal"},
				FirstTimestamp: metav1.Now(), LastTimestamp: metav1.Now(), Count: 1}
		}},
		{name: "nodewright-failedscheduling", event: func(name string, uid types.UID) *corev1.Event {
			return &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: name},
				InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: name, UID: uid},
				Reason:         "FailedScheduling", Message: "Failed to schedule pod, no NodePool offers it", Type: corev1.EventTypeWarning,
				Source: corev1.EventSource{Component: "nodewright"}, ReportingController: "nodewright", ReportingInstance: "nodewright-provisioner",
				FirstTimestamp: metav1.Now(), LastTimestamp: metav1.Now(), Count: 1}
		}},
	}
	batch := 0 // the framework runs each case more than once: every batch of Events has names of its own
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			calls0 := h.calls.Load()
			var seconds, evaluations float64
			b.ResetTimer()
			for range b.N {
				batch++
				i := batch
				sum0, count0 := matchEvaluations(ctx, b, cp.Client)
				inParallel(b, 1000, 8, func(j int64) error {
					ev := tc.event(fmt.Sprintf("%s-%d-%05d", tc.name, i, j), types.UID(fmt.Sprintf("00000000-0000-0000-%04d-%012d", i, j)))
					_, err := cp.Client.CoreV1().Events(ns).Create(ctx, ev, metav1.CreateOptions{})
					return err
				})
				sum1, count1 := matchEvaluations(ctx, b, cp.Client)
				seconds, evaluations = seconds+sum1-sum0, evaluations+count1-count0
			}
			b.StopTimer()
			require.Positive(b, evaluations, "kube-apiserver observed no evaluation of the match conditions")
			require.Equal(b, calls0, h.calls.Load(), "the match conditions let none of these Events through")
			b.ReportMetric(seconds/evaluations*1e6, "us/evaluation")
		})
	}
}

// matchEvaluations reads the sum and count of kube-apiserver's matchEvaluationMetric.
func matchEvaluations(ctx context.Context, tb testing.TB, c kubernetes.Interface) (sum, count float64) {
	raw, err := c.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	require.NoError(tb, err)
	sum, _ = kubetest.SumCounter(string(raw), matchEvaluationMetric+"_sum")
	count, _ = kubetest.SumCounter(string(raw), matchEvaluationMetric+"_count")
	return sum, count
}

// inParallel calls create(i) for every i in [0, n), at most writers at once, and fails tb with the first
// error.
func inParallel(tb testing.TB, n, writers int, create func(i int64) error) {
	g, _ := crash.WithContext(context.Background())
	g.SetLimit(writers)
	for i := range int64(n) {
		g.Go(func() error { return create(i) })
	}
	require.NoError(tb, g.Wait())
}
