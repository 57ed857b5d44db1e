package provisioning

import (
	"slices"
	"time"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
)

// claimStamp is what a claim records, at launch, of the configuration it was launched from: the drift
// hashes, and the NodePool template's expireAfter and terminationGracePeriod, which Karpenter copies onto
// the NodeClaim so that a later NodePool edit drifts running claims rather than changing them.
type claimStamp struct {
	poolHash, classHash string
	lifetime            poolLifetime
}

// poolLifetime is a NodePool template's expireAfter and terminationGracePeriod as a claim stores them
// (state.Claim.ExpireAfter, TerminationGracePeriod).
type poolLifetime struct {
	expireAfter            string
	terminationGracePeriod *time.Duration
}

// lifetimeOf reads np's template (defaulted, so an omitted expireAfter is 720h): expireAfter as a Go
// duration or state.ExpireNever, terminationGracePeriod or nil. Validation refuses malformed durations;
// one that still does not parse is left unrecorded.
func lifetimeOf(np *apis.NodePool) poolLifetime {
	c := np.DeepCopy()
	c.SetDefaults()
	spec := c.Spec.Template.Spec
	var l poolLifetime
	switch {
	case spec.ExpireAfter.IsNever():
		l.expireAfter = state.ExpireNever
	case spec.ExpireAfter.Duration() != nil:
		l.expireAfter = spec.ExpireAfter.Duration().String()
	}
	if spec.TerminationGracePeriod != nil {
		if d, err := spec.TerminationGracePeriod.Parse(); err == nil {
			l.terminationGracePeriod = &d
		}
	}
	return l
}

// stampCreated sets on a new claim the stamp's hashes (with the hash versions this code computes them
// with) and lifetime.
func (s claimStamp) stampCreated(c *state.Claim) {
	c.TemplateHash, c.NodeClassHash = s.poolHash, s.classHash
	if s.poolHash != "" {
		c.TemplateHashVersion = apis.NodePoolHashVersion
	}
	if s.classHash != "" {
		c.NodeClassHashVersion = apis.EC2NodeClassHashVersion
	}
	c.ExpireAfter = s.lifetime.expireAfter
	if tgp := s.lifetime.terminationGracePeriod; tgp != nil {
		d := *tgp
		c.TerminationGracePeriod = &d
	}
}

// launchedWith is the AMI, subnet and security groups a launched instance was started with. They come from
// the launch itself — the image of the launch template of the override EC2 chose, that override's subnet,
// and the security groups every template of the node class carries — so they are known even when
// DescribeInstances has not answered yet (and moto, whose fleet ignores a template's groups, agrees with
// EC2). What the plan does not say is taken from EC2's description of the instance.
func launchedWith(plan LaunchPlan, o instance.Override, found bool, groups []string, inst instance.Instance) (image, subnet string, sgs []string) {
	image, subnet, sgs = inst.ImageID, inst.SubnetID, inst.SecurityGroupIDs
	if found {
		if id := plan.Images[o.LaunchTemplate]; id != "" {
			image = id
		}
		if o.SubnetID != "" {
			subnet = o.SubnetID
		}
		// A launch that left a full subnet went into the zone's next one (subnetMoves): the plan's
		// override still names the full one.
		if s, ok := plan.subnets.subnet(o.Zone); ok && plan.subnets.class.run.isMarked(o.SubnetID) {
			subnet = s.ID
		}
	}
	if len(groups) > 0 {
		sgs = groups
	}
	sgs = slices.Clone(sgs)
	slices.Sort(sgs)
	return image, subnet, slices.Compact(sgs)
}
