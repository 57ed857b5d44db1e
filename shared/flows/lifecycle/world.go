package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/core/settings"
	"github.com/nodewright/nodewright/shared/flows/provisioning"
)

// world is what one pass reads: NodePools and Nodes whole; on a sweep the instances and every live claim,
// between sweeps only the joining claims (see read).
type world struct {
	instances []instance.Instance
	claims    []state.Claim
	pools     map[string]scheduling.NodePool
	nodes     []*corev1.Node
	// byName indexes nodes by name (see nodeByName).
	byName map[string]*corev1.Node
	// problems are configuration items that could not be used.
	problems []string
	// settings are the deployment's settings (its feature gates: NodeRepair).
	settings settings.Settings
}

// joiningLifecycles are the states of the claims whose Node is on its way: what a pass between sweeps
// reads, registers and initializes.
var joiningLifecycles = []state.Lifecycle{state.Pending, state.Launched, state.Registered}

// read lists the instances first and the claims after them: a claim is written before its instance is
// launched, so every listed instance whose claim exists has that claim in the claim list, and a fresh
// launch never looks leaked. A failed instance list comes back as the error with the rest of the world
// (registration can go ahead without it); any other failed read returns no world at all.
//
// Without sweep the instances are not listed and only the joining claims are read (readJoining): such a
// pass registers and initializes, and decides nothing that needs the whole claim list.
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
	if sweep {
		w.claims, err = r.deps.Store.ListClaims(ctx)
	} else {
		w.claims, err = r.readJoining(ctx)
	}
	if err != nil {
		return nil, errors.Join(instErr, err)
	}
	pools, set, problems, err := provisioning.ReadNodePoolsAndSettings(ctx, r.deps.Store)
	if err != nil {
		return nil, errors.Join(instErr, err)
	}
	w.problems, w.settings = problems, set
	w.pools = map[string]scheduling.NodePool{}
	for _, p := range pools {
		w.pools[p.Name] = p
	}
	list, err := r.deps.Nodes.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, errors.Join(instErr, fmt.Errorf("listing nodes: %w", err))
	}
	w.nodes = make([]*corev1.Node, len(list.Items))
	w.byName = make(map[string]*corev1.Node, len(list.Items))
	for i := range list.Items {
		w.nodes[i] = &list.Items[i]
		w.byName[list.Items[i].Name] = &list.Items[i]
	}
	return w, instErr
}

// readJoining reads the claims in the joining states by lifecycle (state.Store.ClaimsInLifecycle: an
// index, a few claims however large the cluster), by name. The index is eventually consistent, which
// registration and initialization allow: a claim not listed yet is taken up by the next pass, and one
// listed in a state it has just left is not moved, since every move is conditional on the state as
// DynamoDB has it and lifting the unregistered taint reads the claim again (see register). A claim that
// moved between two of the reads and is listed twice is kept at its newer version.
func (r *Runner) readJoining(ctx context.Context) ([]state.Claim, error) {
	byName := map[string]state.Claim{}
	for _, l := range joiningLifecycles {
		claims, err := r.deps.Store.ClaimsInLifecycle(ctx, l)
		if err != nil {
			return nil, err
		}
		for _, c := range claims {
			if seen, ok := byName[c.Name]; !ok || c.Version > seen.Version {
				byName[c.Name] = c
			}
		}
	}
	out := make([]state.Claim, 0, len(byName))
	for _, c := range byName {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// nodeByName finds a listed Node.
func (w *world) nodeByName(name string) *corev1.Node {
	return w.byName[name]
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
