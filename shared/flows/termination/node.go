package termination

import (
	"context"
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

// withNode returns the claim with the name of its Node. Registration may not have recorded the name yet
// (the Node joined, the claim was disrupted before registration wrote it down); then the Node is found by
// its spec.providerID — the claim's ProviderID, or aws:///<zone>/<instance id> — and its name recorded on
// the claim, so the drain and the Node's deletion that follow cannot miss it. A claim with no Node to
// find is returned as it is.
func (s *Service) withNode(ctx context.Context, claim state.Claim) (state.Claim, error) {
	if claim.NodeName != "" || claim.Lifecycle == state.Deleted || (claim.ProviderID == "" && claim.InstanceID == "") {
		return claim, nil
	}
	list, err := s.deps.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return claim, fmt.Errorf("listing nodes to find the node of claim %s: %w", claim.Name, err)
	}
	name := ""
	for i := range list.Items {
		if ownsProviderID(claim, list.Items[i].Spec.ProviderID) {
			name = list.Items[i].Name
			break
		}
	}
	if name == "" {
		return claim, nil
	}
	updated, err := s.deps.Store.UpdateClaim(ctx, claim.Name, func(c *state.Claim) error {
		if c.NodeName != "" {
			return errUnchanged
		}
		c.NodeName = name
		return nil
	})
	if errors.Is(err, errUnchanged) {
		return s.deps.Store.GetClaim(ctx, claim.Name)
	}
	if err != nil {
		return claim, fmt.Errorf("recording node %s on claim %s: %w", name, claim.Name, err)
	}
	return updated, nil
}

// ownsProviderID reports whether a Node's spec.providerID names the claim's instance: equal to the
// claim's ProviderID, or aws:///<zone>/<instance id> of its instance (the zone segment may be empty).
func ownsProviderID(claim state.Claim, providerID string) bool {
	if providerID == "" {
		return false
	}
	if claim.ProviderID != "" && providerID == claim.ProviderID {
		return true
	}
	return claim.InstanceID != "" && strings.HasPrefix(providerID, "aws://") && strings.HasSuffix(providerID, "/"+claim.InstanceID)
}
