package sandbox

import (
	"context"
	"fmt"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/nodewright/nodewright/shared/adapters/footprint"
	"github.com/nodewright/nodewright/shared/adapters/mirror"
)

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// installMirrors applies what `nodewright manifests` prints for the mirrors (footprint.Mirrors: the
// nodewright.sh CRDs, then the read-only ValidatingAdmissionPolicy and its binding) as the administrator,
// and waits until the CRDs are served and the policy refuses the administrator's own write: from then on
// the functions' mirror writers meet the cluster a deployed stack meets.
func (s *Sandbox) installMirrors(ctx context.Context) error {
	dyn, err := dynamic.NewForConfig(s.CP.Config)
	if err != nil {
		return err
	}
	for _, obj := range footprint.Mirrors() {
		switch o := obj.(type) {
		case *mirror.CRD:
			if err := createCRD(ctx, dyn, o); err != nil {
				return err
			}
		case *admissionregistrationv1.ValidatingAdmissionPolicy:
			if _, err := s.Client.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, o, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("creating the mirrors' policy: %w", err)
			}
		case *admissionregistrationv1.ValidatingAdmissionPolicyBinding:
			if _, err := s.Client.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, o, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("binding the mirrors' policy: %w", err)
			}
		default:
			return fmt.Errorf("the mirrors' footprint holds a %T the sandbox cannot apply", obj)
		}
	}
	// The API server takes policies up from a watch: a dry-run creation by the administrator is refused
	// once the policy is in force.
	probe := &unstructured.Unstructured{Object: map[string]any{"apiVersion": mirror.APIVersion, "kind": mirror.NodeClaims.Kind,
		"metadata": map[string]any{"name": "mirror-policy-probe"}}}
	return poll(ctx, 30*time.Second, "the mirrors' read-only policy to be in force", func() bool {
		_, err := dyn.Resource(mirror.NodeClaims.Resource()).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return apierrors.IsForbidden(err)
	})
}

// createCRD creates one CRD and waits until it is established (served).
func createCRD(ctx context.Context, dyn dynamic.Interface, crd *mirror.CRD) error {
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
	if err != nil {
		return err
	}
	crds := dyn.Resource(crdResource)
	if _, err := crds.Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the CRD %s: %w", crd.Name, err)
	}
	return poll(ctx, 30*time.Second, "the CRD "+crd.Name+" to be established", func() bool {
		got, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
				return true
			}
		}
		return false
	})
}

// poll calls done every 100 ms until it is true, for at most timeout.
func poll(ctx context.Context, timeout time.Duration, what string, done func() bool) error {
	deadline := time.Now().Add(timeout)
	for !done() {
		if time.Now().After(deadline) {
			return fmt.Errorf("waited %s for %s", timeout, what)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return nil
}

// nodeClaimMirrors is the NodeClaim mirrors' writer of function f, as its main wires it: the mirror
// client over f's own identity (its footprint ClusterRole, in its group that the policy lets write), with
// the writer's default bounds.
func (s *Sandbox) nodeClaimMirrors(f footprint.Function) (*mirror.Writer, error) {
	client, err := mirror.NewClient(s.configs[f], mirror.NodeClaims, "nodewright-"+string(f))
	if err != nil {
		return nil, err
	}
	return mirror.NewWriter(mirror.NodeClaims, client, mirror.Options{}), nil
}

// claimEvents is function f's Event publisher as its main wires it: its recorder, giving NodeClaim Events
// their mirror's UID from memo (f's NodeClaim writer; nil for a function without one) or a metadata GET
// as f's identity.
func (s *Sandbox) claimEvents(f footprint.Function, memo mirror.UIDSource) *mirror.ClaimEvents {
	events, err := mirror.NewConfigClaimEvents(s.configs[f], s.recorders[f], memo)
	if err != nil {
		s.fail(fmt.Errorf("%s: building its NodeClaim Event publisher: %w", f, err))
		return mirror.NewClaimEvents(s.recorders[f], memo, nil)
	}
	return events
}

// configMirrors is the NodePool and EC2NodeClass mirrors' writer of the disruption function, as
// functions/disruption wires it: over its own identity, publishing Events through its recorder.
func (s *Sandbox) configMirrors() (*mirror.StatusWriter, error) {
	f := footprint.Disruption
	return mirror.NewConfigStatusWriter(s.configs[f], "nodewright-"+string(f), s.recorders[f])
}

// claimFollower is the NodeClaim mirror follower of function f (disruption, interruption, termination),
// as its main wires it: the function's own identity and field manager, the default bounds.
func (s *Sandbox) claimFollower(f footprint.Function) *mirror.Follower {
	fl, err := mirror.NewClaimFollower(s.configs[f], "nodewright-"+string(f))
	if err != nil {
		panic(fmt.Sprintf("the %s mirror follower: %v", f, err)) // a rest.Config the sandbox built itself
	}
	return fl
}
