package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/nodewright/nodewright/shared/adapters/capacitybuffer"
	"github.com/nodewright/nodewright/shared/adapters/kube"
)

// capacityBuffersPath is where the API server serves CapacityBuffers once their CRD is installed.
const capacityBuffersPath = "/apis/" + capacitybuffer.Group + "/" + capacitybuffer.Version

// installCapacityBufferCRD creates the CapacityBuffer CRD as `nodewright manifests
// --capacity-buffer-crd` prints it (an administrator's kubectl apply) and waits until namespace serves
// CapacityBuffers.
func (s *Sandbox) installCapacityBufferCRD(ctx context.Context, namespace string) error {
	body, err := yaml.YAMLToJSON(capacitybuffer.CRD)
	if err != nil {
		return fmt.Errorf("reading the CapacityBuffer CRD: %w", err)
	}
	err = s.Client.CoreV1().RESTClient().Post().AbsPath("/apis/apiextensions.k8s.io/v1/customresourcedefinitions").
		SetHeader("Content-Type", "application/json").Body(body).Do(ctx).Error()
	if err != nil && !kube.IsConflict(err) {
		return fmt.Errorf("creating the CapacityBuffer CRD: %w", err)
	}
	buffers := kube.NewBuffers(s.Client, namespace)
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, _, err := buffers.ListCapacityBuffers(ctx, 1)
		if err == nil {
			s.Timeline.Printf("scenario", "CapacityBuffer CRD (%s/%s) installed", capacitybuffer.Group, capacitybuffer.Version)
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("the API server does not serve CapacityBuffers: %w", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// createCapacityBuffer creates a CapacityBuffer keeping room for replicas copies of PodTemplate template.
func (s *Sandbox) createCapacityBuffer(ctx context.Context, namespace, name, template string, replicas int32) error {
	body, err := json.Marshal(map[string]any{
		"apiVersion": capacitybuffer.Group + "/" + capacitybuffer.Version, "kind": capacitybuffer.Kind,
		"metadata": map[string]any{"name": name, "namespace": namespace},
		"spec":     map[string]any{"podTemplateRef": map[string]any{"name": template}, "replicas": replicas},
	})
	if err != nil {
		return err
	}
	if err := s.Client.CoreV1().RESTClient().Post().AbsPath(capacityBuffersPath, "namespaces", namespace, capacitybuffer.Resource).
		SetHeader("Content-Type", "application/json").Body(body).Do(ctx).Error(); err != nil {
		return fmt.Errorf("creating CapacityBuffer %s/%s: %w", namespace, name, err)
	}
	return nil
}

// bufferProvisioning is the Provisioning condition of CapacityBuffer namespace/name as "Status/Reason"
// ("" while the provisioner has not written it).
func (s *Sandbox) bufferProvisioning(ctx context.Context, namespace, name string) (string, error) {
	raw, err := s.Client.CoreV1().RESTClient().Get().AbsPath(capacityBuffersPath, "namespaces", namespace, capacitybuffer.Resource, name).
		SetHeader("Accept", "application/json").Do(ctx).Raw()
	if err != nil {
		return "", fmt.Errorf("reading CapacityBuffer %s/%s: %w", namespace, name, err)
	}
	var b capacitybuffer.CapacityBuffer
	if err := json.Unmarshal(raw, &b); err != nil {
		return "", fmt.Errorf("decoding CapacityBuffer %s/%s: %w", namespace, name, err)
	}
	for _, c := range b.Status.Conditions {
		if c.Type == capacitybuffer.ConditionProvisioning {
			return string(c.Status) + "/" + c.Reason, nil
		}
	}
	return "", nil
}
