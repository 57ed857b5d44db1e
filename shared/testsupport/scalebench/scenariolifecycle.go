package scalebench

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

// JoiningClaims is how many claims join in the lifecycle scenario's pass.
const JoiningClaims = 50

// lifecycleScenario: one pass with JoiningClaims launched claims whose Nodes just registered (running
// instances, Nodes Ready with the karpenter.sh/unregistered taint). Each repetition brings its own
// joining nodes and retires them afterwards (claims deleted, Nodes and instances gone), so the cluster
// keeps its size.
type lifecycleScenario struct {
	world
	nodes     []NodePlan
	instances []Instance
	names     []string
}

func (s *lifecycleScenario) Arrange(ctx context.Context, rep int) (Payload, error) {
	plan := s.l.Plan
	s.nodes = plan.JoiningNodes(rep, JoiningClaims)
	specs := make([]launchSpec, len(s.nodes))
	for i, n := range s.nodes {
		specs[i] = launchSpec{Shape: n.Shape, Zone: n.Zone, CapacityType: n.CapacityType, NodePool: n.NodePool, Claim: n.Claim}
	}
	var err error
	if s.instances, err = runInstances(ctx, s.ec2, specs); err != nil {
		return Payload{}, err
	}
	claims := make([]state.Claim, len(s.nodes))
	for i, n := range s.nodes {
		claims[i] = plan.claimOf(n, s.instances[i], state.Launched, s.l.h, s.l.prices)
	}
	if err := createClaims(ctx, s.env.Store, claims); err != nil {
		return Payload{}, err
	}
	s.names = make([]string, len(s.nodes))
	return Payload{}, parallel(ctx, len(s.nodes), writers, func(ctx context.Context, i int) error {
		n := plan.JoiningNode(s.nodes[i], s.instances[i])
		s.names[i] = n.Name
		return writeNode(ctx, s.env.Client, n)
	})
}

// Tidy retires the repetition's joining claims and removes their Nodes (finalizer first: registration
// added it) and instances.
func (s *lifecycleScenario) Tidy(ctx context.Context, rep int) error {
	if _, err := s.retireNewClaims(ctx, nil); err != nil {
		return err
	}
	ids := make([]string, len(s.instances))
	for i, inst := range s.instances {
		ids[i] = inst.ID
	}
	if _, err := s.ec2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: ids}); err != nil {
		return fmt.Errorf("terminating the joining instances: %w", err)
	}
	return parallel(ctx, len(s.names), writers, func(ctx context.Context, i int) error {
		return removeNode(ctx, s.env, s.names[i])
	})
}

func (s *lifecycleScenario) Finish(context.Context) error { return nil }

// removeNode deletes a Node, lifting its finalizers first.
func removeNode(ctx context.Context, env *Env, name string) error {
	nodes := env.Client.CoreV1().Nodes()
	if _, err := nodes.Patch(ctx, name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("lifting Node %s's finalizers: %w", name, err)
	}
	if err := nodes.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting Node %s: %w", name, err)
	}
	return nil
}
