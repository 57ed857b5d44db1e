package capacitybuffer

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// Placement counts where a solve put one buffer's virtual pods.
type Placement struct {
	// Existing are on existing nodes or claims in flight (room there already: Karpenter's existing
	// capacity counts its in-flight NodeClaims too); New on claims this solve launches; Failed nowhere.
	Existing, New, Failed int
}

// Tally counts, per buffer ("namespace/name"), where plan put its virtual pods.
func Tally(plan *scheduling.Plan) map[string]Placement {
	out := map[string]Placement{}
	add := func(pods []*corev1.Pod, f func(*Placement)) {
		for _, p := range pods {
			if key := BufferOf(p); key != "" {
				pl := out[key]
				f(&pl)
				out[key] = pl
			}
		}
	}
	for _, n := range plan.ExistingNodes {
		add(n.Pods, func(p *Placement) { p.Existing++ })
	}
	for _, c := range plan.NewClaims {
		add(c.Pods, func(p *Placement) { p.New++ })
	}
	for _, f := range plan.Unschedulable {
		if key := BufferOf(f.Pod); key != "" {
			pl := out[key]
			pl.Failed++
			out[key] = pl
		}
	}
	return out
}

// desiredStatus is b's status after a run whose solve placed its pods as placed (nil: the solve saw
// none of them, and Provisioning stays as it is), at now: ReadyForProvisioning from resolving it,
// Provisioning with Karpenter's reasons, the observed template and replicas. A condition whose status,
// reason and message do not change keeps its transition time.
func desiredStatus(b *Buffer, placed *Placement, now time.Time) Status {
	st := b.Object.Status
	st.Conditions = slices.Clone(st.Conditions)
	gen := b.Object.Generation
	set := func(t string, ok bool, reason, msg string) {
		status := metav1.ConditionFalse
		if ok {
			status = metav1.ConditionTrue
		}
		c := metav1.Condition{Type: t, Status: status, Reason: reason, Message: msg, ObservedGeneration: gen, LastTransitionTime: metav1.NewTime(now)}
		if old := condition(st.Conditions, t); old != nil {
			if old.Status == c.Status {
				c.LastTransitionTime = old.LastTransitionTime
			}
			*old = c
			return
		}
		st.Conditions = append(st.Conditions, c)
	}
	st.ProvisioningStrategy = b.Object.Spec.ProvisioningStrategy
	set(ConditionReadyForProvisioning, b.Ready, b.Reason, b.Message)
	switch {
	case !b.Ready:
		set(ConditionProvisioning, false, ReasonNotReadyForProvisioning, "Buffer is not ReadyForProvisioning")
		return st
	case b.Object.Spec.PodTemplateRef != nil:
		st.PodTemplateRef = &LocalObjectRef{Name: b.Object.Spec.PodTemplateRef.Name}
		st.PodTemplateGeneration = b.TemplateGeneration
	default:
		st.PodTemplateRef, st.PodTemplateGeneration = nil, nil
	}
	replicas := b.Replicas
	st.Replicas = &replicas
	switch {
	case replicas == 0:
		set(ConditionProvisioning, false, ReasonBufferEmpty, "Buffer has zero desired replicas")
	case placed == nil:
	case placed.New > 0 || placed.Failed > 0:
		set(ConditionProvisioning, false, ReasonRequiresNewCapacity, fmt.Sprintf("%d/%d virtual pods required new capacity, %d failed",
			placed.New, replicas, placed.Failed))
	case placed.Existing == int(replicas):
		set(ConditionProvisioning, true, ReasonFitsExistingCapacity, fmt.Sprintf("All %d virtual pods fit on existing capacity", replicas))
	}
	return st
}

// StatusWrites is what WriteStatus did.
type StatusWrites struct {
	// Written counts the buffers whose status changed and was written.
	Written int
	// Errors name each buffer whose write failed; a buffer changed since it was read is left to the
	// next run and is not an error.
	Errors []string
}

// WriteStatus writes each buffer's status (desiredStatus, with placed from Tally) when it changed,
// and only then: one PUT of the status subresource per changed buffer, with the resourceVersion it was
// read at.
func (s *Set) WriteStatus(ctx context.Context, c Cluster, placed map[string]Placement, now time.Time) StatusWrites {
	var out StatusWrites
	if s == nil {
		return out
	}
	for _, b := range s.Buffers {
		var pl *Placement
		if p, ok := placed[b.Object.Key()]; ok {
			pl = &p
		}
		st := desiredStatus(b, pl, now)
		if equality.Semantic.DeepEqual(st, b.Object.Status) {
			continue
		}
		body, err := withStatus(b.raw, st)
		if err == nil {
			err = c.UpdateCapacityBufferStatus(ctx, b.Object.Namespace, b.Object.Name, body)
		}
		switch {
		case err == nil:
			out.Written++
			b.Object.Status = st
		case kube.IsConflict(err) || kube.IsNotFound(err):
		default:
			out.Errors = append(out.Errors, fmt.Sprintf("CapacityBuffer %s: %v", b.Object.Key(), err))
		}
	}
	return out
}

// withStatus is the object raw with its status fields replaced by st's, every other field (and any
// status field Nodewright does not know) as read.
func withStatus(raw json.RawMessage, st Status) ([]byte, error) {
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("decoding the buffer: %w", err)
	}
	status, _ := obj["status"].(map[string]any)
	if status == nil {
		status = map[string]any{}
	}
	for _, k := range []string{"podTemplateRef", "replicas", "podTemplateGeneration", "conditions", "provisioningStrategy"} {
		delete(status, k)
	}
	b, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	var ours map[string]any
	if err := json.Unmarshal(b, &ours); err != nil {
		return nil, err
	}
	for k, v := range ours {
		status[k] = v
	}
	obj["status"] = status
	return json.Marshal(obj)
}
