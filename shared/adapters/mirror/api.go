package mirror

import "k8s.io/apimachinery/pkg/runtime/schema"

// The mirrors' API: Nodewright's own group, never karpenter.sh or karpenter.k8s.aws.
const (
	Group   = "nodewright.sh"
	Version = "v1"
	// APIVersion is what every mirror's apiVersion says.
	APIVersion = Group + "/" + Version
	// Category groups the three kinds: `kubectl get nodewright` lists them all.
	Category = "nodewright"
	// HashAnnotation holds the hash of the labels, spec and status the writer last wrote whole
	// (conditions' times left out). It is written last, so it never claims content that was not written.
	HashAnnotation = Group + "/mirror-hash"
	// ClaimVersionAnnotation holds the version of the claim record a NodeClaim mirror was last written
	// from. Writers that follow one claim's change (Follower) leave a mirror written from a newer record
	// as it is, so two writers never flap it.
	ClaimVersionAnnotation = Group + "/claim-version"
)

// Kind is one mirrored kind and its names in the API.
type Kind struct {
	Kind, ListKind, Plural, Singular string
	// ShortNames are prefixed nw: Karpenter's EC2NodeClass has ec2nc/ec2ncs, and a short name two
	// groups share is resolved by kubectl to whichever its discovery lists first.
	ShortNames []string
}

// The mirrored kinds.
var (
	NodeClaims     = Kind{Kind: "NodeClaim", ListKind: "NodeClaimList", Plural: "nodeclaims", Singular: "nodeclaim", ShortNames: []string{"nwnc", "nwncs"}}
	NodePools      = Kind{Kind: "NodePool", ListKind: "NodePoolList", Plural: "nodepools", Singular: "nodepool", ShortNames: []string{"nwnp", "nwnps"}}
	EC2NodeClasses = Kind{Kind: "EC2NodeClass", ListKind: "EC2NodeClassList", Plural: "ec2nodeclasses", Singular: "ec2nodeclass",
		ShortNames: []string{"nwec2nc", "nwec2ncs"}}
)

// Kinds lists the mirrored kinds in a fixed order.
func Kinds() []Kind { return []Kind{NodeClaims, NodePools, EC2NodeClasses} }

// Resource is the kind's resource in the API.
func (k Kind) Resource() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: Group, Version: Version, Resource: k.Plural}
}
