package kube

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// capacityBuffersPath is where the API server serves SIG Autoscaling's CapacityBuffers
// (autoscaling.x-k8s.io/v1beta1, a CustomResourceDefinition: JSON only, no protobuf).
const capacityBuffersPath = "/apis/autoscaling.x-k8s.io/v1beta1"

// Buffers reads CapacityBuffers and what they name, and writes their status, for
// shared/adapters/capacitybuffer. Buffers travel as raw JSON so the caller decodes only what it uses and a
// status write keeps every field it does not know.
type Buffers struct {
	client kubernetes.Interface
	// namespace, when set, limits the list to one namespace (tests share one API server).
	namespace string
}

// NewBuffers reads CapacityBuffers in every namespace, or in namespace alone when it is not "".
func NewBuffers(c kubernetes.Interface, namespace string) *Buffers {
	return &Buffers{client: c, namespace: namespace}
}

// ListCapacityBuffers lists one page of at most limit CapacityBuffers, as raw JSON objects; more says
// the API server holds more than that. The cluster not serving the API is ErrNotFound.
func (b *Buffers) ListCapacityBuffers(ctx context.Context, limit int64) (items []json.RawMessage, more bool, err error) {
	path := capacityBuffersPath + "/capacitybuffers"
	if b.namespace != "" {
		path = capacityBuffersPath + "/namespaces/" + b.namespace + "/capacitybuffers"
	}
	raw, err := b.client.CoreV1().RESTClient().Get().AbsPath(path).
		Param("limit", fmt.Sprint(limit)).
		SetHeader("Accept", "application/json").
		Do(ctx).Raw()
	if err != nil {
		return nil, false, fmt.Errorf("listing CapacityBuffers: %w", mapError(err))
	}
	var list struct {
		Metadata metav1.ListMeta   `json:"metadata"`
		Items    []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, false, fmt.Errorf("decoding the CapacityBuffer list: %w", err)
	}
	return list.Items, list.Metadata.Continue != "", nil
}

// UpdateCapacityBufferStatus replaces the status of the CapacityBuffer namespace/name with the one in
// object (the whole object as read, its resourceVersion included: a buffer changed since is
// ErrConflict, and the write is left to a later read).
func (b *Buffers) UpdateCapacityBufferStatus(ctx context.Context, namespace, name string, object []byte) error {
	err := b.client.CoreV1().RESTClient().Put().
		AbsPath(capacityBuffersPath, "namespaces", namespace, "capacitybuffers", name, "status").
		SetHeader("Content-Type", "application/json").
		SetHeader("Accept", "application/json").
		Body(object).
		Do(ctx).Error()
	if err != nil {
		return fmt.Errorf("updating the status of CapacityBuffer %s/%s: %w", namespace, name, mapError(err))
	}
	return nil
}

// PodTemplate reads one PodTemplate.
func (b *Buffers) PodTemplate(ctx context.Context, namespace, name string) (*corev1.PodTemplate, error) {
	pt, err := b.client.CoreV1().PodTemplates(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading PodTemplate %s/%s: %w", namespace, name, mapError(err))
	}
	return pt, nil
}

// Workload reads the pod template and the replicas (1 when unset, as the API defaults them) of the
// Deployment, StatefulSet or ReplicaSet namespace/name; another kind is an error naming it.
func (b *Buffers) Workload(ctx context.Context, kind, namespace, name string) (*corev1.PodTemplateSpec, int32, error) {
	apps := b.client.AppsV1()
	var (
		template corev1.PodTemplateSpec
		replicas *int32
		err      error
	)
	switch kind {
	case "Deployment":
		d, e := apps.Deployments(namespace).Get(ctx, name, metav1.GetOptions{})
		if err = e; e == nil {
			template, replicas = d.Spec.Template, d.Spec.Replicas
		}
	case "StatefulSet":
		s, e := apps.StatefulSets(namespace).Get(ctx, name, metav1.GetOptions{})
		if err = e; e == nil {
			template, replicas = s.Spec.Template, s.Spec.Replicas
		}
	case "ReplicaSet":
		r, e := apps.ReplicaSets(namespace).Get(ctx, name, metav1.GetOptions{})
		if err = e; e == nil {
			template, replicas = r.Spec.Template, r.Spec.Replicas
		}
	default:
		return nil, 0, fmt.Errorf("kind %q is not a Deployment, StatefulSet or ReplicaSet", kind)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("reading %s %s/%s: %w", kind, namespace, name, mapError(err))
	}
	n := int32(1)
	if replicas != nil {
		n = *replicas
	}
	return &template, n, nil
}
