package drift

import "time"

// Claim is what a launched claim recorded. An empty field is unknown (a claim written before it was
// recorded, or rebuilt from its instance): the kinds that read it are not judged.
type Claim struct {
	Name string
	// TemplateHash and NodeClassHash are the NodePool template and EC2NodeClass hashes the claim was
	// launched from, with the hash versions they were computed with.
	TemplateHash, TemplateHashVersion   string
	NodeClassHash, NodeClassHashVersion string
	// ImageID, SubnetID and SecurityGroupIDs are what the instance was launched with.
	ImageID, SubnetID string
	SecurityGroupIDs  []string
	// CapacityReservationID is the reservation the instance runs in; empty when it runs in none.
	CapacityReservationID string
	// Labels are the node's labels (the NodeClaim's, as Karpenter compares them): its NodePool's, its
	// instance type's (architecture, GPU count...), zone and capacity type.
	Labels map[string]string
	// LabelsFromNode is set when Labels are the Node's, standing in for a claim that recorded none (an
	// adopted or older claim): a requirement on a label they lack is then not judged, since the Node may
	// simply never have carried it.
	LabelsFromNode bool
	// CreatedAt is when the claim was created: InstanceTypeNotFound is judged only once it is older than
	// InstanceTypeCheckAge.
	CreatedAt time.Time
}

// NodePool is the claim's NodePool as configured now.
type NodePool struct {
	// TemplateHash is its template's drift hash, computed with TemplateHashVersion.
	TemplateHash, TemplateHashVersion string
	// Requirements are spec.template.spec.requirements.
	Requirements []Requirement
	// InstanceTypes looks up an instance type the NodePool offers now, with its offerings: every type
	// its EC2NodeClass can launch, as a launch builds them, whether or not an offering has capacity at
	// the moment (Karpenter's GetInstanceTypes). ok is false when the type is not offered at all. Nil
	// leaves InstanceTypeNotFound undecided: what the NodePool offers is not known.
	InstanceTypes func(name string) (offerings []Offering, ok bool)
}

// Offering is where and how an instance type can be bought: a zone and a capacity type (spot,
// on-demand or reserved).
type Offering struct {
	Zone, CapacityType string
}

// NodeClass is the claim's EC2NodeClass as configured now.
type NodeClass struct {
	// Hash is its static drift hash, computed with HashVersion.
	Hash, HashVersion string
}

// Resolution is what the EC2NodeClass's selectors resolve to now.
type Resolution struct {
	// Err is set when the resolution failed: no kind that reads it is decided.
	Err error
	// Incomplete names the kinds the resolver could not resolve fully, with why (an AMIsReady condition
	// that is False, say); those kinds are not decided. An empty list of AMIs, subnets or security groups
	// counts as incomplete too, as in Karpenter.
	Incomplete map[Reason]string
	// AMIs are the resolved AMIs. Only whether there are any is read here: an EC2NodeClass that resolves
	// none leaves AMIDrift undecided. Which one a node should run is ImageFor's answer.
	AMIs []AMI
	// ImageFor is the AMI a launch would choose now for the claim's instance type: the launch path's own
	// choice (provisioning's), so that drift and launches never disagree on it. ok is false when the
	// choice cannot be made (the instance type is not among the EC2NodeClass's, say): AMIDrift is then
	// undecided. An id of "" with ok true means no resolved AMI fits the instance type any more, which is
	// drift. Nil leaves AMIDrift undecided.
	ImageFor func(c Claim) (id string, ok bool)
	// SubnetIDs, SecurityGroupIDs and CapacityReservationIDs are what the selectors match.
	SubnetIDs              []string
	SecurityGroupIDs       []string
	CapacityReservationIDs []string
}

// AMI is one resolved AMI.
type AMI struct {
	ID         string
	Deprecated bool
}

// Requirement is a node selector requirement (operators In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte, Lte).
type Requirement struct {
	Key      string
	Operator string
	Values   []string
}
