package provisioning

import (
	"math/rand/v2"
	"strconv"

	"github.com/nodewright/nodewright/shared/core/apis"
)

// claimNameAlphabet is what the random suffix of a claim name is drawn from (Kubernetes' generateName
// uses the same kind of suffix).
const claimNameAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

// claimNameSuffixLen is the length of that suffix. NodePool names are bounded (apis.MaxNodePoolNameLength)
// so that a claim name and every launch attempt's token built from it fit CreateFleet's ClientToken.
const claimNameSuffixLen = apis.NodeClaimNameSuffixLength

// claimName is "<nodepool>-<5 random lowercase letters or digits>".
func claimName(nodePool string, r *rand.Rand) string {
	b := make([]byte, claimNameSuffixLen)
	for i := range b {
		b[i] = claimNameAlphabet[r.IntN(len(claimNameAlphabet))]
	}
	return nodePool + "-" + string(b)
}

// attemptToken is the CreateFleet ClientToken of a claim's fallback launch attempt (attempt ≥ 1; the first
// attempt's token is the claim name): "<claim>-<attempt>".
func attemptToken(claim string, attempt int) string {
	return claim + "-" + strconv.Itoa(attempt)
}
