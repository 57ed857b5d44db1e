package apis

// Nodewright names each NodeClaim "<nodepool>-<random suffix>" and launches it with EC2 CreateFleet, whose
// idempotency token (ClientToken) is the claim name on the first attempt and "<claim>-<attempt>" on each
// fallback attempt (a token reused with other parameters is refused). EC2 refuses tokens longer than
// MaxClientTokenLength, so NodePool names are bounded to leave room for both suffixes: a longer name would
// validate and then never launch.
const (
	// MaxClientTokenLength is EC2's limit on a CreateFleet ClientToken.
	MaxClientTokenLength = 64
	// NodeClaimNameSuffixLength is the length of the random suffix of a claim name.
	NodeClaimNameSuffixLength = 5
	// LaunchAttemptSuffixLength is the room a fallback attempt's "-<attempt>" takes after the claim name in
	// its token; the provisioner's attempts are numbered with one digit.
	LaunchAttemptSuffixLength = len("-") + 1
	// MaxNodeClaimNameLength is the longest claim name every launch attempt can use.
	MaxNodeClaimNameLength = MaxClientTokenLength - LaunchAttemptSuffixLength
	// MaxNodePoolNameLength is the longest NodePool name whose claims can launch.
	MaxNodePoolNameLength = MaxNodeClaimNameLength - len("-") - NodeClaimNameSuffixLength
)
