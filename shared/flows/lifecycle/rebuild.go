package lifecycle

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/reconcile"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// rebuild writes the claim of an own instance no claim stands for (after a redeploy with an empty table,
// or a lost record), from the instance's nodewright.sh tags and, when one runs on it, its Node: a Node
// still carrying the unregistered taint leaves the claim launched for registration to finish; a
// registered one makes it registered, or initialized when the Node says so. The instance is never
// terminated here; one whose Node never comes is handed over at the registration timeout like any other.
// The NodePool and node class hashes, expireAfter and terminationGracePeriod are unknown (drift re-stamps
// the hashes from the configuration as it is now); the AMI, subnet and security groups are EC2's.
func (p *passState) rebuild(ctx context.Context, a reconcile.Action, inst instance.Instance) {
	subject := "nodeclaim/" + a.Claim
	var node *corev1.Node
	if a.Node != "" {
		node = p.w.nodeByName(a.Node)
	}
	pool := inst.Tags[instance.TagNodePool]
	if pool == "" && node != nil {
		pool = node.Labels[scheduling.LabelNodePool]
	}
	if pool == "" {
		p.fail(subject, errors.New("instance "+inst.ID+" has no "+instance.TagNodePool+" tag and no Node naming its NodePool; its claim cannot be rebuilt"))
		return
	}
	launched := inst.LaunchTime.UTC()
	now := p.r.deps.Now().UTC()
	c := state.Claim{Name: a.Claim, NodePool: pool, NodeClass: inst.Tags[instance.TagNodeClass], Lifecycle: state.Launched,
		InstanceTypes: []string{inst.InstanceType}, InstanceID: inst.ID, InstanceType: inst.InstanceType, Zone: inst.Zone,
		CapacityType: inst.CapacityType, ProviderID: inst.ProviderID(), CreatedAt: launched, LaunchedAt: &launched}
	recordLaunchFacts(&c, inst)
	if p.r.deps.Prices != nil {
		if price, ok := p.r.deps.Prices.Price(inst.InstanceType, inst.Zone, inst.CapacityType); ok {
			c.PricePerHour = price
		}
	}
	if node != nil && !hasTaint(node, UnregisteredTaintKey) {
		c.Lifecycle, c.NodeName, c.RegisteredAt = state.Registered, node.Name, ptrTime(now)
		if node.Labels[InitializedLabel] == "true" {
			c.Lifecycle, c.InitializedAt = state.Initialized, ptrTime(now)
		}
	}
	if _, err := p.r.deps.Store.CreateClaim(ctx, c); err != nil {
		p.fail(subject, err)
		return
	}
	p.lifecycle[c.Name] = c.Lifecycle
	p.rep.Rebuilt++
	details := map[string]string{"instanceId": inst.ID, "instanceType": inst.InstanceType, "zone": inst.Zone,
		"capacityType": inst.CapacityType, "nodePool": pool, "lifecycle": string(c.Lifecycle)}
	if c.NodeName != "" {
		details["node"] = c.NodeName
	}
	p.decide(ctx, subject, string(a.Kind), "Rebuilt", a.Reason, details)
}

func ptrTime(t time.Time) *time.Time { return &t }
