package driftinput

import (
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/nodeclass"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/drift"
)

// Inputs are drift.Detect's arguments for one claim.
type Inputs struct {
	Claim      drift.Claim
	NodePool   drift.NodePool
	NodeClass  drift.NodeClass
	Resolution drift.Resolution
	// Now is when the claim is judged (Observed.Now).
	Now time.Time
}

// Detect runs drift.Detect on the inputs.
func (in Inputs) Detect() drift.Result {
	return drift.Detect(in.Claim, in.NodePool, in.NodeClass, in.Resolution, in.Now)
}

// Observed is what the caller knows of the claim now, beyond its record; every field is optional.
type Observed struct {
	// Now is when the caller judges the claim: InstanceTypeNotFound is judged only for a claim older than
	// drift.InstanceTypeCheckAge then, so without it that kind is not judged.
	Now time.Time
	// NodeLabels are the labels of the claim's Node. They stand in for the claim's own only when the claim
	// did not record its instance type's labels (an adopted or rebuilt claim), as Karpenter compares the
	// NodeClaim's labels, which a later kubectl label does not change.
	NodeLabels map[string]string
	// Instance is EC2's current description of the claim's instance. Its capacity reservation replaces
	// the one recorded at launch (an instance whose reservation ended runs on as on-demand, which is not
	// drift), and its AMI, subnet and security groups fill what the claim did not record.
	Instance *instance.Instance
}

// For builds the inputs of claim c: np and nc are its NodePool and EC2NodeClass as configured now, res
// and resErr the resolver's answer for nc (resErr set when Resolve failed), obs what is known of the
// claim now. The current hashes are computed as `nodewright apply` stores them (apis.NodePoolTemplateHash,
// apis.EC2NodeClassHash) with this code's hash versions.
//
// Resolution.ImageFor and NodePool.InstanceTypes are left nil, which leaves AMIDrift and
// InstanceTypeNotFound undecided: which AMI a node should run and which instance types a NodePool offers
// are the launch path's answers, so the caller that launches sets them (provisioning.Launches.Drift
// does).
func For(c state.Claim, np *apis.NodePool, nc *apis.EC2NodeClass, res nodeclass.Resolution, resErr error, obs Observed) Inputs {
	return TargetOf(np, nc, res, resErr).For(c, obs)
}

// Target is the configuration side of drift's inputs, the same for every claim of a NodePool: its
// current hash and requirements, its EC2NodeClass's hash and resolution (the NodePool's instance types
// are the caller's to set, as For says). A caller judging many claims builds it once per NodePool
// (hashing and converting the resolution once) and calls For per claim.
type Target struct {
	NodePool   drift.NodePool
	NodeClass  drift.NodeClass
	Resolution drift.Resolution
}

// TargetOf builds the Target of a NodePool np with EC2NodeClass nc resolved to res (resErr set when
// Resolve failed).
func TargetOf(np *apis.NodePool, nc *apis.EC2NodeClass, res nodeclass.Resolution, resErr error) Target {
	return Target{NodePool: nodePoolOf(np), NodeClass: nodeClassOf(nc), Resolution: resolutionOf(res, resErr)}
}

// For builds the inputs of claim c against t; obs is what is known of the claim now.
func (t Target) For(c state.Claim, obs Observed) Inputs {
	return Inputs{Claim: claimOf(c, obs), NodePool: t.NodePool, NodeClass: t.NodeClass, Resolution: t.Resolution, Now: obs.Now}
}

// Lifetime is what c's expiry is judged from: its creation and the expireAfter stamped at launch or, for
// a claim launched before expireAfter was stamped (or rebuilt from its instance), its NodePool's current
// one (np may be nil: then it has none, and never expires).
func Lifetime(c state.Claim, np *apis.NodePool) drift.Lifetime {
	l := drift.Lifetime{CreatedAt: c.CreatedAt, ExpireAfter: c.ExpireAfter}
	if l.ExpireAfter != "" || np == nil {
		return l
	}
	p := np.DeepCopy()
	p.SetDefaults()
	switch ea := p.Spec.Template.Spec.ExpireAfter; {
	case ea.IsNever():
		l.ExpireAfter = drift.ExpireNever
	case ea.Duration() != nil:
		l.ExpireAfter = ea.Duration().String()
	}
	return l
}

func claimOf(c state.Claim, obs Observed) drift.Claim {
	out := drift.Claim{Name: c.Name, TemplateHash: c.TemplateHash, TemplateHashVersion: c.TemplateHashVersion,
		NodeClassHash: c.NodeClassHash, NodeClassHashVersion: c.NodeClassHashVersion,
		ImageID: c.ImageID, SubnetID: c.SubnetID, SecurityGroupIDs: slices.Clone(c.SecurityGroupIDs),
		CapacityReservationID: c.Labels[apis.LabelCapacityReservationID], Labels: maps.Clone(c.Labels), CreatedAt: c.CreatedAt}
	if c.Labels[corev1.LabelInstanceTypeStable] == "" && len(obs.NodeLabels) > 0 {
		out.Labels = maps.Clone(obs.NodeLabels)
		maps.Copy(out.Labels, c.Labels)
		out.LabelsFromNode = true
	}
	if inst := obs.Instance; inst != nil {
		out.CapacityReservationID = inst.CapacityReservationID
		if out.ImageID == "" {
			out.ImageID = inst.ImageID
		}
		if out.SubnetID == "" {
			out.SubnetID = inst.SubnetID
		}
		if len(out.SecurityGroupIDs) == 0 {
			out.SecurityGroupIDs = slices.Clone(inst.SecurityGroupIDs)
		}
	}
	return out
}

// nodePoolOf is np's current hash and requirements; a nil np (not configured) has neither.
func nodePoolOf(np *apis.NodePool) drift.NodePool {
	if np == nil {
		return drift.NodePool{}
	}
	out := drift.NodePool{TemplateHash: apis.NodePoolTemplateHash(np), TemplateHashVersion: apis.NodePoolHashVersion}
	for _, r := range np.Spec.Template.Spec.Requirements {
		out.Requirements = append(out.Requirements, drift.Requirement{Key: r.Key, Operator: string(r.Operator), Values: slices.Clone(r.Values)})
	}
	return out
}

func nodeClassOf(nc *apis.EC2NodeClass) drift.NodeClass {
	if nc == nil {
		return drift.NodeClass{}
	}
	return drift.NodeClass{Hash: apis.EC2NodeClassHash(nc), HashVersion: apis.EC2NodeClassHashVersion}
}

// conditionKinds maps the resolver's readiness conditions to the drift kinds that read what they cover.
var conditionKinds = map[string]drift.Reason{
	apis.ConditionTypeAMIsReady:                 drift.AMIDrift,
	apis.ConditionTypeSubnetsReady:              drift.SubnetDrift,
	apis.ConditionTypeSecurityGroupsReady:       drift.SecurityGroupDrift,
	apis.ConditionTypeCapacityReservationsReady: drift.CapacityReservationDrift,
}

// resolutionOf turns the resolver's answer into drift's: a condition that is not True makes its kind
// incomplete, with the condition's reason and message.
func resolutionOf(res nodeclass.Resolution, err error) drift.Resolution {
	out := drift.Resolution{Err: err}
	for _, c := range res.Status.Conditions {
		kind, ok := conditionKinds[c.Type]
		if !ok || c.Status == metav1.ConditionTrue {
			continue
		}
		if out.Incomplete == nil {
			out.Incomplete = map[drift.Reason]string{}
		}
		why := c.Reason
		if c.Message != "" {
			why += ": " + c.Message
		}
		out.Incomplete[kind] = c.Type + " is " + string(c.Status) + " (" + why + ")"
	}
	for _, a := range res.Status.AMIs {
		out.AMIs = append(out.AMIs, drift.AMI{ID: a.ID, Deprecated: a.Deprecated})
	}
	for _, s := range res.Status.Subnets {
		out.SubnetIDs = append(out.SubnetIDs, s.ID)
	}
	for _, sg := range res.Status.SecurityGroups {
		out.SecurityGroupIDs = append(out.SecurityGroupIDs, sg.ID)
	}
	for _, cr := range res.Status.CapacityReservations {
		out.CapacityReservationIDs = append(out.CapacityReservationIDs, cr.ID)
	}
	return out
}
