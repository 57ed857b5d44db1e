package kube

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/nodewright/nodewright/shared/testsupport/kubetest"
)

// TestEventsAreDeduplicatedOnTheAPIServer publishes the same Event repeatedly and checks one exists,
// then a different message, then the same one after the window.
func TestEventsAreDeduplicatedOnTheAPIServer(t *testing.T) {
	_, c, ns := realCluster(t, kubetest.Options{})
	ctx := context.Background()
	pod := createPod(t, c, ns, testPod("pending", "", nil), "")
	clock := &fakeClock{now: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
	r := NewRecorder(c, RecorderOptions{Now: clock.Now, Instance: "provisioner"})

	nominated := Event{Object: PodObject(pod), Reason: ReasonNominated, Message: "Pod should schedule on: nodeclaim/default-abc12"}
	for i := range 5 {
		wrote, err := r.Publish(ctx, nominated)
		require.NoError(t, err)
		assert.Equal(t, i == 0, wrote, "publish %d", i)
		clock.Advance(10 * time.Second)
	}
	other := nominated
	other.Message = "Pod should schedule on: node/ip-10-0-0-1"
	wrote, err := r.Publish(ctx, other)
	require.NoError(t, err)
	assert.True(t, wrote, "another message is another Event")
	clock.Advance(defaultDedupeWindow)
	wrote, err = r.Publish(ctx, nominated)
	require.NoError(t, err)
	assert.True(t, wrote, "after the window the same Event is published again")

	list, err := c.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: fields.Set{
		"involvedObject.name": pod.Name, "reason": string(ReasonNominated)}.String()})
	require.NoError(t, err)
	require.Len(t, list.Items, 3)
	e := list.Items[0]
	assert.Equal(t, corev1.EventTypeNormal, e.Type)
	assert.Equal(t, "nodewright", e.Source.Component)
	assert.Equal(t, "provisioner", e.ReportingInstance)
	assert.Equal(t, pod.UID, e.InvolvedObject.UID)
	assert.Equal(t, int32(1), e.Count)
	assert.True(t, strings.HasPrefix(e.Name, pod.Name+"."))
}

func TestNodeEventsGoToTheDefaultNamespace(t *testing.T) {
	client := fake.NewClientset()
	r := NewRecorder(client, RecorderOptions{})
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ip-10-0-0-1", UID: "u1"}}
	_, err := r.Publish(context.Background(), Event{Object: NodeObject(node), Type: corev1.EventTypeWarning,
		Reason: ReasonFailedDraining, Message: strings.Repeat("x", 5000)})
	require.NoError(t, err)
	list, err := client.CoreV1().Events(metav1.NamespaceDefault).List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, list.Items, 1)
	assert.Equal(t, "FailedDraining", list.Items[0].Reason)
	assert.Len(t, list.Items[0].Message, maxMessageLength, "long messages are truncated")
	assert.Equal(t, "Node", list.Items[0].InvolvedObject.Kind)
}

func TestEventsAreRateLimited(t *testing.T) {
	client := fake.NewClientset()
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	r := NewRecorder(client, RecorderOptions{Now: clock.Now, Rate: 2, Burst: 3})
	publish := func(i int) bool {
		wrote, err := r.Publish(context.Background(), Event{Object: NodePoolObject("default"),
			Reason: ReasonNoCompatibleInstanceTypes, Message: string(rune('a' + i))})
		require.NoError(t, err)
		return wrote
	}
	var got []bool
	for i := range 5 {
		got = append(got, publish(i))
	}
	assert.Equal(t, []bool{true, true, true, false, false}, got, "the burst, then nothing")
	clock.Advance(time.Second)
	assert.True(t, publish(10))
	assert.True(t, publish(11))
	assert.False(t, publish(12), "two per second")
}

func TestAFailedEventCanBeRetried(t *testing.T) {
	client := fake.NewClientset()
	fail := true
	client.PrependReactor("create", "events", func(k8stesting.Action) (bool, runtime.Object, error) {
		if fail {
			return true, nil, apierrors.NewServiceUnavailable("etcd leader changed")
		}
		return false, nil, nil
	})
	r := NewRecorder(client, RecorderOptions{})
	e := Event{Object: NodePoolObject("default"), Reason: ReasonInsufficientCapacityError, Message: "m"}
	_, err := r.Publish(context.Background(), e)
	assert.True(t, IsUnavailable(err), "%v", err)
	assert.False(t, errors.Is(err, ErrNotFound))
	fail = false
	wrote, err := r.Publish(context.Background(), e)
	require.NoError(t, err)
	assert.True(t, wrote, "the failed Event is not remembered as published")
}
