package scalebench

import (
	"context"
	"strings"
	"time"

	"github.com/nodewright/nodewright/shared/adapters/pricing"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
)

// claimLabels are the labels a claim records for its Node: the Node's, without those only the kubelet
// and the cloud provider set.
func claimLabels(nodeLabels map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range nodeLabels {
		switch {
		case k == "kubernetes.io/hostname", strings.HasPrefix(k, "beta.kubernetes.io/"), strings.HasPrefix(k, "failure-domain.beta."),
			k == "k8s.io/cloud-provider-aws", k == "topology.ebs.csi.aws.com/zone", k == "karpenter.sh/registered", k == "karpenter.sh/initialized":
			continue
		}
		out[k] = v
	}
	return out
}

// claimOf is the claim of node n on inst in lifecycle l, as the provisioner launched it from Config and
// the lifecycle function moved it on (registered and initialized Nodes have their NodeName and times).
func (p *Plan) claimOf(np NodePlan, inst Instance, l state.Lifecycle, h hashes, prices *pricing.Provider) state.Claim {
	created := p.Now.Add(-np.Age).UTC().Truncate(time.Second)
	launched, registered, initialized := created.Add(5*time.Second), created.Add(45*time.Second), created.Add(70*time.Second)
	price, ok := prices.Price(np.Shape.Name, np.Zone, np.CapacityType)
	if !ok && np.CapacityType == "spot" {
		if od, ok := prices.Price(np.Shape.Name, np.Zone, "on-demand"); ok {
			price = od * 0.4
		}
	}
	c := state.Claim{Name: np.Claim, NodePool: np.NodePool, NodeClass: "default", Lifecycle: l,
		TemplateHash: h.pools[np.NodePool], TemplateHashVersion: apis.NodePoolHashVersion,
		NodeClassHash: h.class, NodeClassHashVersion: apis.EC2NodeClassHashVersion, ExpireAfter: h.expireAfter[np.NodePool],
		InstanceTypes: []string{np.Shape.Name}, Labels: claimLabels(nodeLabels(np, inst)),
		InstanceID: inst.ID, InstanceType: np.Shape.Name, Zone: np.Zone, CapacityType: np.CapacityType, PricePerHour: price,
		ProviderID: inst.ProviderID(np.Zone), CreatedAt: created, LaunchedAt: &launched}
	if l != state.Launched {
		c.NodeName = inst.PrivateDNS
		c.RegisteredAt = &registered
	}
	if l == state.Initialized || l == state.Draining {
		c.InitializedAt = &initialized
	}
	return c
}

// createClaims writes claims through state.Store, MaxClaimsPerWrite at a time.
func createClaims(ctx context.Context, store *state.Store, claims []state.Claim) error {
	batches := (len(claims) + state.MaxClaimsPerWrite - 1) / state.MaxClaimsPerWrite
	return parallel(ctx, batches, 4, func(ctx context.Context, b int) error {
		lo := b * state.MaxClaimsPerWrite
		_, err := store.CreateClaims(ctx, claims[lo:min(lo+state.MaxClaimsPerWrite, len(claims))])
		return err
	})
}
