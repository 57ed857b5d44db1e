package capacitybuffer

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/kube"
)

// target is the object a buffer takes its pod template from.
type target struct{ kind, namespace, name string }

// fetched is what reading a target gave.
type fetched struct {
	template   *corev1.PodTemplateSpec
	replicas   int32 // the workload's; -1 for a PodTemplate
	generation *int64
	err        error
}

// resolveAll resolves every buffer of set: checks its spec, reads what it names (each target once,
// maxConcurrentReads at a time) and counts its chunks.
func resolveAll(ctx context.Context, c Cluster, set *Set) {
	// The readers write into targets; the loop that starts them ranges over distinct, never over the map.
	targets := map[target]*fetched{}
	var distinct []target
	of := make([]target, len(set.Buffers))
	for i, b := range set.Buffers {
		t, reason, msg := targetOf(b.Object)
		if reason != "" {
			b.Reason, b.Message = reason, msg
			continue
		}
		of[i] = t
		if _, seen := targets[t]; !seen {
			targets[t] = nil
			distinct = append(distinct, t)
		}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	slots := make(chan struct{}, maxConcurrentReads)
	for _, t := range distinct {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			f := fetch(ctx, c, t)
			mu.Lock()
			targets[t] = f
			mu.Unlock()
		}()
	}
	wg.Wait()
	for i, b := range set.Buffers {
		if b.Reason != "" {
			continue
		}
		f := targets[of[i]]
		if f.err != nil {
			b.Reason, b.Message = ReasonResolutionFailed, f.err.Error()
			if kube.IsNotFound(f.err) {
				b.Reason = ReasonScalableRefNotFound
				if of[i].kind == "PodTemplate" {
					b.Reason = ReasonPodTemplateNotFound
				}
			} else {
				set.Unresolved = append(set.Unresolved, b.Object.Key())
			}
			continue
		}
		b.Ready, b.Reason, b.Message = true, ReasonResolved, "Pod template resolved successfully"
		b.template, b.TemplateGeneration = f.template, f.generation
		b.Replicas = chunks(b.Object.Spec, f.replicas, f.template)
	}
}

// targetOf checks the buffer's spec and names what it takes its template from; reason and message
// say what is wrong with the spec, naming the field.
func targetOf(b *CapacityBuffer) (target, string, string) {
	s := b.Spec
	switch {
	case s.PodTemplateRef != nil && s.ScalableRef != nil:
		return target{}, ReasonResolutionFailed, "spec: podTemplateRef and scalableRef are both set; set exactly one"
	case s.PodTemplateRef == nil && s.ScalableRef == nil:
		return target{}, ReasonResolutionFailed, "Neither podTemplateRef nor scalableRef is set"
	case s.PodTemplateRef != nil:
		if s.PodTemplateRef.Name == "" {
			return target{}, ReasonResolutionFailed, "spec.podTemplateRef.name: required"
		}
		return target{kind: "PodTemplate", namespace: b.Namespace, name: s.PodTemplateRef.Name}, "", ""
	}
	ref := s.ScalableRef
	switch {
	case ref.APIGroup != "" && ref.APIGroup != "apps":
		return target{}, ReasonResolutionFailed, fmt.Sprintf("spec.scalableRef.apiGroup: %q is not supported: only apps (Deployment, StatefulSet, ReplicaSet)", ref.APIGroup)
	case ref.Kind != KindDeployment && ref.Kind != KindStatefulSet && ref.Kind != KindReplicaSet:
		return target{}, ReasonResolutionFailed, fmt.Sprintf("spec.scalableRef.kind: %q is not supported: Deployment, StatefulSet or ReplicaSet", ref.Kind)
	case ref.Name == "":
		return target{}, ReasonResolutionFailed, "spec.scalableRef.name: required"
	}
	return target{kind: ref.Kind, namespace: b.Namespace, name: ref.Name}, "", ""
}

// fetch reads one target.
func fetch(ctx context.Context, c Cluster, t target) *fetched {
	if t.kind == "PodTemplate" {
		pt, err := c.PodTemplate(ctx, t.namespace, t.name)
		if err != nil {
			return &fetched{err: err}
		}
		gen := pt.Generation
		return &fetched{template: &pt.Template, replicas: -1, generation: &gen}
	}
	tmpl, replicas, err := c.Workload(ctx, t.kind, t.namespace, t.name)
	if err != nil {
		return &fetched{err: err}
	}
	return &fetched{template: tmpl, replicas: replicas}
}
