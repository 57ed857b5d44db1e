package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/instance"
	"github.com/nodewright/nodewright/shared/provisioning"
	"github.com/nodewright/nodewright/shared/scheduling"
	"github.com/nodewright/nodewright/shared/state"
)

// world is what one pass reads: claims, NodePools, Nodes and instances, each whole.
type world struct {
	instances []instance.Instance
	claims    []state.Claim
	pools     map[string]scheduling.NodePool
	nodes     []*corev1.Node
	// problems are configuration items that could not be used.
	problems []string
}

// read lists the instances first and the claims after them: a claim is written before its instance is
// launched, so every listed instance whose claim exists has that claim in the claim list, and a fresh
// launch never looks leaked. A failed instance list comes back as the error with the rest of the world
// (registration can go ahead without it); any other failed read returns no world at all. Without sweep
// the instances are not listed (the pass decides no repairs).
func (r *Runner) read(ctx context.Context, sweep bool) (*world, error) {
	w := &world{}
	var instErr error
	if sweep {
		w.instances, instErr = r.deps.Instances.List(ctx)
	}
	if instErr != nil {
		instErr = fmt.Errorf("listing the cluster's instances: %w", instErr)
	}
	var err error
	if w.claims, err = r.deps.Store.ListClaims(ctx); err != nil {
		return nil, errors.Join(instErr, err)
	}
	pools, problems, err := provisioning.ReadNodePools(ctx, r.deps.Store)
	if err != nil {
		return nil, errors.Join(instErr, err)
	}
	w.problems = problems
	w.pools = map[string]scheduling.NodePool{}
	for _, p := range pools {
		w.pools[p.Name] = p
	}
	list, err := r.deps.Nodes.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, errors.Join(instErr, fmt.Errorf("listing nodes: %w", err))
	}
	w.nodes = make([]*corev1.Node, len(list.Items))
	for i := range list.Items {
		w.nodes[i] = &list.Items[i]
	}
	return w, instErr
}

// nodeByName finds a listed Node.
func (w *world) nodeByName(name string) *corev1.Node {
	for _, n := range w.nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// instanceID returns the EC2 instance id of an aws:///<zone>/<id> providerID, or "".
func instanceID(providerID string) string {
	if !strings.HasPrefix(providerID, "aws://") {
		return ""
	}
	id := providerID[strings.LastIndex(providerID, "/")+1:]
	if !strings.HasPrefix(id, "i-") {
		return ""
	}
	return id
}
