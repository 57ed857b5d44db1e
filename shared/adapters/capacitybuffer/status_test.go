package capacitybuffer

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// written decodes the status the fake API server took for team/name.
func written(t *testing.T, c *fakeCluster, name string) (Status, map[string]any) {
	t.Helper()
	raw, ok := c.updates["team/"+name]
	require.True(t, ok, "status of %s written", name)
	var b CapacityBuffer
	require.NoError(t, json.Unmarshal(raw, &b))
	var obj map[string]any
	require.NoError(t, json.Unmarshal(raw, &obj))
	return b.Status, obj
}

func cond(t *testing.T, st Status, typ string) metav1.Condition {
	t.Helper()
	c := condition(st.Conditions, typ)
	require.NotNil(t, c, "condition %s", typ)
	return *c
}

func TestStatusConditionsFollowWhereTheVirtualPodsWent(t *testing.T) {
	now := time.Date(2026, 12, 2, 5, 0, 0, 0, time.UTC)
	c := &fakeCluster{
		buffers: []json.RawMessage{
			bufferJSON(t, "fits", Spec{PodTemplateRef: &LocalObjectRef{Name: "web"}, Replicas: int32p(2)}),
			bufferJSON(t, "needs", Spec{ScalableRef: &ScalableRef{Kind: KindDeployment, Name: "web"}, Replicas: int32p(3)}),
			bufferJSON(t, "empty", Spec{PodTemplateRef: &LocalObjectRef{Name: "web"}, Replicas: int32p(0)}),
			bufferJSON(t, "missing", Spec{PodTemplateRef: &LocalObjectRef{Name: "gone"}, Replicas: int32p(1)}),
		},
		templates: map[string]*corev1.PodTemplate{"team/web": {ObjectMeta: metav1.ObjectMeta{Generation: 3}, Template: podTemplate("1", "1Gi")}},
		workloads: map[string]fakeWorkload{"team/web": {kind: KindDeployment, template: podTemplate("1", "1Gi"), replicas: 4}},
	}
	set, err := Read(context.Background(), c)
	require.NoError(t, err)
	var fits, needs []*corev1.Pod
	for _, p := range set.Pods() {
		if BufferOf(p) == "team/fits" {
			fits = append(fits, p)
		} else {
			needs = append(needs, p)
		}
	}
	require.Len(t, fits, 2)
	require.Len(t, needs, 3)
	plan := &scheduling.Plan{
		ExistingNodes: []scheduling.NodePlacement{{Name: "node-a", Pods: append(fits[:1:1], needs[0])}, {Name: "claim-b", Pods: fits[1:]}},
		NewClaims:     []scheduling.ClaimPlan{{Pods: needs[1:2]}},
		Unschedulable: []scheduling.PodFailure{{Pod: needs[2]}},
	}
	placed := Tally(plan)
	assert.Equal(t, Placement{Existing: 2}, placed["team/fits"])
	assert.Equal(t, Placement{Existing: 1, New: 1, Failed: 1}, placed["team/needs"])

	w := set.WriteStatus(context.Background(), c, placed, now)
	assert.Empty(t, w.Errors)
	assert.Equal(t, 4, w.Written)

	st, _ := written(t, c, "fits")
	ready := cond(t, st, ConditionReadyForProvisioning)
	assert.Equal(t, metav1.ConditionTrue, ready.Status)
	assert.Equal(t, ReasonResolved, ready.Reason)
	assert.Equal(t, int64(2), ready.ObservedGeneration)
	prov := cond(t, st, ConditionProvisioning)
	assert.Equal(t, metav1.ConditionTrue, prov.Status)
	assert.Equal(t, ReasonFitsExistingCapacity, prov.Reason)
	assert.Equal(t, "All 2 virtual pods fit on existing capacity", prov.Message)
	assert.Equal(t, int32(2), *st.Replicas)
	assert.Equal(t, "web", st.PodTemplateRef.Name)
	assert.Equal(t, int64(3), *st.PodTemplateGeneration)
	assert.Nil(t, condition(st.Conditions, ConditionLimitedByQuotas), "no quota is read, so none is claimed")

	st, _ = written(t, c, "needs")
	prov = cond(t, st, ConditionProvisioning)
	assert.Equal(t, metav1.ConditionFalse, prov.Status)
	assert.Equal(t, ReasonRequiresNewCapacity, prov.Reason)
	assert.Equal(t, "1/3 virtual pods required new capacity, 1 failed", prov.Message)
	assert.Nil(t, st.PodTemplateRef, "a scalableRef has no template reference")
	assert.Nil(t, st.PodTemplateGeneration)

	st, _ = written(t, c, "empty")
	assert.Equal(t, ReasonBufferEmpty, cond(t, st, ConditionProvisioning).Reason)
	assert.Equal(t, int32(0), *st.Replicas)

	st, _ = written(t, c, "missing")
	assert.Equal(t, metav1.ConditionFalse, cond(t, st, ConditionReadyForProvisioning).Status)
	assert.Equal(t, ReasonPodTemplateNotFound, cond(t, st, ConditionReadyForProvisioning).Reason)
	assert.Equal(t, ReasonNotReadyForProvisioning, cond(t, st, ConditionProvisioning).Reason)
}

func TestStatusIsWrittenOnlyWhenItChanges(t *testing.T) {
	now := time.Date(2026, 12, 2, 5, 0, 0, 0, time.UTC)
	raw := bufferJSON(t, "web", Spec{PodTemplateRef: &LocalObjectRef{Name: "web"}, Replicas: int32p(1)})
	var obj map[string]any
	require.NoError(t, json.Unmarshal(raw, &obj))
	obj["status"] = map[string]any{"futureField": "kept"}
	raw, _ = json.Marshal(obj)
	c := &fakeCluster{buffers: []json.RawMessage{raw},
		templates: map[string]*corev1.PodTemplate{"team/web": {Template: podTemplate("1", "1Gi")}}}
	round := func(at time.Time, placement Placement) StatusWrites {
		set, err := Read(context.Background(), c)
		require.NoError(t, err)
		return set.WriteStatus(context.Background(), c, map[string]Placement{"team/web": placement}, at)
	}
	require.Equal(t, 1, round(now, Placement{New: 1}).Written)
	st, o := written(t, c, "web")
	assert.Equal(t, "kept", o["status"].(map[string]any)["futureField"], "status fields Nodewright does not know are kept")
	firstTransition := cond(t, st, ConditionReadyForProvisioning).LastTransitionTime

	c.updates = nil
	assert.Equal(t, 0, round(now.Add(time.Minute), Placement{New: 1}).Written, "nothing changed: no write")
	assert.Empty(t, c.updates)

	assert.Equal(t, 1, round(now.Add(2*time.Minute), Placement{Existing: 1}).Written, "the room is there now")
	st, _ = written(t, c, "web")
	assert.Equal(t, ReasonFitsExistingCapacity, cond(t, st, ConditionProvisioning).Reason)
	assert.True(t, cond(t, st, ConditionProvisioning).LastTransitionTime.Time.Equal(now.Add(2*time.Minute)), "Provisioning turned True")
	assert.True(t, cond(t, st, ConditionReadyForProvisioning).LastTransitionTime.Time.Equal(firstTransition.Time), "ReadyForProvisioning did not change")
}

func TestStatusWriteConflictsAreLeftToTheNextRun(t *testing.T) {
	c := &fakeCluster{buffers: []json.RawMessage{bufferJSON(t, "web", Spec{PodTemplateRef: &LocalObjectRef{Name: "web"}, Replicas: int32p(1)})},
		templates: map[string]*corev1.PodTemplate{"team/web": {Template: podTemplate("1", "1Gi")}}}
	set, err := Read(context.Background(), c)
	require.NoError(t, err)
	c.updateErr = fmt.Errorf("updating: %w", kube.ErrConflict)
	w := set.WriteStatus(context.Background(), c, nil, time.Now())
	assert.Empty(t, w.Errors)
	assert.Zero(t, w.Written)
	c.updateErr = fmt.Errorf("updating: %w", kube.ErrForbidden)
	w = set.WriteStatus(context.Background(), c, nil, time.Now())
	require.Len(t, w.Errors, 1)
	assert.Contains(t, w.Errors[0], "CapacityBuffer team/web")
}
