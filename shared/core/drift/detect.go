package drift

import (
	"slices"
	"strings"
	"time"
)

// Verdict is the outcome of Detect.
type Verdict string

const (
	// NotDrifted: every kind was decided and none drifted (kinds the claim did not record are Unknown).
	NotDrifted Verdict = "NotDrifted"
	// Drifted: at least one kind drifted; Reason is the first.
	Drifted Verdict = "Drifted"
	// Undecided: none drifted, but some kinds could not be decided (see Result.Undecided); a Drifted
	// condition set earlier must be left as it is.
	Undecided Verdict = "Undecided"
)

// Result is what Detect found.
type Result struct {
	Verdict Verdict
	// Reason is the first kind that drifted, in Reasons' order; empty unless Drifted.
	Reason Reason
	// Reasons are every kind that drifted, in order.
	Reasons []Reason
	// Details say what drifted, for decision records and explain: old and new hash (oldTemplateHash,
	// newTemplateHash, oldNodeClassHash, newNodeClassHash), the unmet requirement and the node's label
	// (requirement, label), the instance type no longer offered and, when it is the offering that is gone,
	// the node's zone and capacity type (instanceType, zone, capacityType), old and new AMI (oldImageId,
	// newImageId), the instance's and the selected security groups (oldSecurityGroupIds,
	// newSecurityGroupIds), the instance's and the selected subnets (oldSubnetId, selectedSubnetIds), and
	// the reservation (capacityReservationId, selectedCapacityReservationIds). Lists are comma-separated
	// and sorted.
	Details map[string]string
	// Undecided are the kinds not decided because the resolution failed or was incomplete (or, for
	// InstanceTypeNotFound, what the NodePool offers is not known), with why.
	Undecided map[Reason]string
	// Unknown are the kinds not judged because the claim did not record what they compare.
	Unknown []Reason
	// Restamp, when set, holds hashes to write on the claim because its hash was computed with another
	// hash version: that is not drift (Karpenter re-stamps). A caller should not re-stamp a claim that is
	// already marked drifted by the same kind, or the evidence of its drift is lost.
	Restamp *Restamp
}

// Restamp are the current hashes (and versions) to record on a claim; only the pairs to re-stamp are set.
type Restamp struct {
	TemplateHash, TemplateHashVersion   string
	NodeClassHash, NodeClassHashVersion string
}

// Detect decides whether claim has drifted from pool, class and what class resolves to now (res), at
// now (which only InstanceTypeNotFound reads: a zero now judges it for no claim).
func Detect(claim Claim, pool NodePool, class NodeClass, res Resolution, now time.Time) Result {
	d := detection{details: map[string]string{}, undecided: map[Reason]string{}}
	d.templateHash(claim, pool)
	d.requirements(claim, pool)
	d.instanceType(claim, pool, now)
	d.nodeClassHash(claim, class)
	d.resolved(claim, res)

	r := Result{Reasons: d.drifted, Unknown: d.unknown, Restamp: d.restamp, Verdict: NotDrifted}
	if len(d.details) > 0 {
		r.Details = d.details
	}
	if len(d.undecided) > 0 {
		r.Undecided = d.undecided
		r.Verdict = Undecided
	}
	if len(d.drifted) > 0 {
		r.Verdict, r.Reason = Drifted, d.drifted[0]
	}
	return r
}

// detection accumulates the checks' findings; each check adds its kind to one of drifted, undecided or
// unknown, or to none when it did not drift.
type detection struct {
	drifted   []Reason
	unknown   []Reason
	undecided map[Reason]string
	details   map[string]string
	restamp   *Restamp
}

func (d *detection) drift(kind Reason, details ...string) {
	d.drifted = append(d.drifted, kind)
	for i := 0; i+1 < len(details); i += 2 {
		d.details[details[i]] = details[i+1]
	}
}

func (d *detection) restamping() *Restamp {
	if d.restamp == nil {
		d.restamp = &Restamp{}
	}
	return d.restamp
}

// templateHash: a NodePool template hash of the current version that differs is drift; one of another
// version (or none, on a claim written before versions were recorded) is re-stamped.
func (d *detection) templateHash(c Claim, p NodePool) {
	switch {
	case p.TemplateHash == "" || p.TemplateHashVersion == "":
		d.unknown = append(d.unknown, NodePoolDrifted)
	case c.TemplateHashVersion != p.TemplateHashVersion || c.TemplateHash == "":
		rs := d.restamping()
		rs.TemplateHash, rs.TemplateHashVersion = p.TemplateHash, p.TemplateHashVersion
	case c.TemplateHash != p.TemplateHash:
		d.drift(NodePoolDrifted, "oldTemplateHash", c.TemplateHash, "newTemplateHash", p.TemplateHash)
	}
}

// nodeClassHash is templateHash's rule for the EC2NodeClass hash.
func (d *detection) nodeClassHash(c Claim, nc NodeClass) {
	switch {
	case nc.Hash == "" || nc.HashVersion == "":
		d.unknown = append(d.unknown, NodeClassDrift)
	case c.NodeClassHashVersion != nc.HashVersion || c.NodeClassHash == "":
		rs := d.restamping()
		rs.NodeClassHash, rs.NodeClassHashVersion = nc.Hash, nc.HashVersion
	case c.NodeClassHash != nc.Hash:
		d.drift(NodeClassDrift, "oldNodeClassHash", c.NodeClassHash, "newNodeClassHash", nc.Hash)
	}
}

// requirements: the node's labels must still meet every requirement of its NodePool. A label the
// NodePool does not constrain is not looked at; a requirement on a label the node lacks is met only by
// NotIn and DoesNotExist, unless the labels are the Node's standing in for the claim's (not judged).
func (d *detection) requirements(c Claim, p NodePool) {
	if !recordsInstanceLabels(c.Labels) {
		d.unknown = append(d.unknown, RequirementsDrifted)
		return
	}
	reqs := p.Requirements
	if c.LabelsFromNode {
		reqs = slices.DeleteFunc(slices.Clone(reqs), func(r Requirement) bool { _, ok := c.Labels[r.Key]; return !ok })
	}
	if r, unmet := firstUnmet(reqs, c.Labels); unmet {
		label := "<absent>"
		if v, ok := c.Labels[r.Key]; ok {
			label = r.Key + "=" + v
		}
		d.drift(RequirementsDrifted, "requirement", r.String(), "label", label)
	}
}

// resolved runs the kinds that compare the instance with what the node class resolves to now.
func (d *detection) resolved(c Claim, res Resolution) {
	decidable := func(kind Reason, empty bool, what string) bool {
		switch {
		case res.Err != nil:
			d.undecided[kind] = "resolving the EC2NodeClass failed: " + res.Err.Error()
		case res.Incomplete[kind] != "":
			d.undecided[kind] = res.Incomplete[kind]
		case empty:
			d.undecided[kind] = "the EC2NodeClass resolves no " + what
		default:
			return true
		}
		return false
	}

	if c.ImageID == "" || !recordsInstanceLabels(c.Labels) {
		d.unknown = append(d.unknown, AMIDrift)
	} else if decidable(AMIDrift, len(res.AMIs) == 0, "AMI") {
		d.image(c, res.ImageFor)
	}

	if len(c.SecurityGroupIDs) == 0 {
		d.unknown = append(d.unknown, SecurityGroupDrift)
	} else if decidable(SecurityGroupDrift, len(res.SecurityGroupIDs) == 0, "security group") {
		if had, want := set(c.SecurityGroupIDs), set(res.SecurityGroupIDs); !slices.Equal(had, want) {
			d.drift(SecurityGroupDrift, "oldSecurityGroupIds", strings.Join(had, ","), "newSecurityGroupIds", strings.Join(want, ","))
		}
	}

	if c.SubnetID == "" {
		d.unknown = append(d.unknown, SubnetDrift)
	} else if decidable(SubnetDrift, len(res.SubnetIDs) == 0, "subnet") {
		if !slices.Contains(res.SubnetIDs, c.SubnetID) {
			d.drift(SubnetDrift, "oldSubnetId", c.SubnetID, "selectedSubnetIds", strings.Join(set(res.SubnetIDs), ","))
		}
	}

	// A claim in no reservation has nothing to drift from; no reservation selected is a valid answer.
	if c.CapacityReservationID != "" && decidable(CapacityReservationDrift, false, "") {
		if !slices.Contains(res.CapacityReservationIDs, c.CapacityReservationID) {
			d.drift(CapacityReservationDrift, "capacityReservationId", c.CapacityReservationID,
				"selectedCapacityReservationIds", orNone(strings.Join(set(res.CapacityReservationIDs), ",")))
		}
	}
}

// Labels of the instance type a claim records once its launch has answered.
const (
	labelInstanceType = "node.kubernetes.io/instance-type"
	labelArch         = "kubernetes.io/arch"
)

// recordsInstanceLabels reports whether labels include the launched instance type's labels (a claim
// whose launch was recorded, or a Node's). Without them a requirement or AMI on the architecture, GPU
// or family would look unmet when it is only unrecorded.
func recordsInstanceLabels(labels map[string]string) bool {
	return labels[labelInstanceType] != "" && labels[labelArch] != ""
}

// image: the instance's AMI must be the one a launch of its instance type would choose now (imageFor,
// the launch path's choice); when that choice cannot be made, AMIDrift is undecided.
func (d *detection) image(c Claim, imageFor func(Claim) (string, bool)) {
	if imageFor == nil {
		d.undecided[AMIDrift] = "no launch AMI choice to compare with"
		return
	}
	want, ok := imageFor(c)
	if !ok {
		d.undecided[AMIDrift] = "the AMI a launch would choose for instance type " + c.Labels[labelInstanceType] +
			" is not known (not among the EC2NodeClass's instance types now, say)"
		return
	}
	if want != c.ImageID {
		d.drift(AMIDrift, "oldImageId", c.ImageID, "newImageId", orNone(want))
	}
}

// set is ids sorted, without duplicates.
func set(ids []string) []string {
	out := slices.Clone(ids)
	slices.Sort(out)
	return slices.Compact(out)
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}
