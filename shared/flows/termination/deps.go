package termination

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// Store is the state a termination reads and writes; *state.Store satisfies it.
type Store interface {
	// GetClaim reads a claim; state.ErrNotFound when there is none.
	GetClaim(ctx context.Context, name string) (state.Claim, error)
	// UpdateClaim applies mutate with optimistic locking; an error from mutate abandons the update.
	UpdateClaim(ctx context.Context, name string, mutate func(*state.Claim) error) (state.Claim, error)
	// GetConfig reads one configuration item; state.ErrNotFound when there is none.
	GetConfig(ctx context.Context, kind, name string) (state.ConfigItem, error)
	RecordDecision(ctx context.Context, d state.Decision) error
	// ReleaseDisruption gives the claim's disruption-budget slot back; without a reservation it does nothing.
	ReleaseDisruption(ctx context.Context, nodePool, claim string) error
	// Mark reads a state-table high-water mark (the provisioner's last complete snapshot).
	Mark(ctx context.Context, name string) (time.Time, error)
	// ClaimReplacements returns the claims launched to replace a claim (Claim.Replaces names it), each
	// read by key.
	ClaimReplacements(ctx context.Context, replaced string) ([]state.Claim, error)
}

// Actions changes Nodes and pods; *kube.Actions satisfies it. Every method is idempotent, and a 429 from a
// PodDisruptionBudget is an EvictionResult, not an error.
type Actions interface {
	Taint(ctx context.Context, node string, taint corev1.Taint) error
	Label(ctx context.Context, node string, labels map[string]*string) error
	Evict(ctx context.Context, ref kube.PodRef) (kube.EvictionResult, error)
	DeletePod(ctx context.Context, ref kube.PodRef, o kube.DeleteOptions) error
	DeleteNode(ctx context.Context, node string) error
	// RemoveFinalizer takes a finalizer off the Node; a Node without it or gone is left alone.
	RemoveFinalizer(ctx context.Context, node, finalizer string) error
	// ForgetPods force-deletes the pods bound to the Node; only for a Node whose instance is terminated.
	ForgetPods(ctx context.Context, node string) (int, error)
}

// Instances terminates a claim's EC2 instances; *instance.Launcher satisfies it. Terminate succeeds for
// an instance that is already gone; FindByClaim finds a live (not shutting down) instance of the claim;
// Terminated says whether EC2 reports the instance terminated, or unknown longer than
// instance.NotFoundGrace after launchedAt (shutting down is not yet).
type Instances interface {
	Terminate(ctx context.Context, id string) error
	FindByClaim(ctx context.Context, claim string) (instance.Instance, bool, error)
	Terminated(ctx context.Context, id string, launchedAt time.Time) (bool, error)
}

// Events publishes Kubernetes Events (best effort); *kube.Recorder satisfies it.
type Events interface {
	Publish(ctx context.Context, e kube.Event) (bool, error)
}

// Queue sends the re-driven request back to the termination queue; *sqs.Client satisfies it.
type Queue interface {
	SendMessage(ctx context.Context, in *sqs.SendMessageInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
}

var (
	_ Store     = (*state.Store)(nil)
	_ Actions   = (*kube.Actions)(nil)
	_ Instances = (*instance.Launcher)(nil)
	_ Events    = (*kube.Recorder)(nil)
	_ Queue     = (*sqs.Client)(nil)
)
