package provisioning

import "math/rand/v2"

// claimNameAlphabet is what the random suffix of a claim name is drawn from (Kubernetes' generateName
// uses the same kind of suffix).
const claimNameAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

// claimNameSuffixLen is the length of that suffix.
const claimNameSuffixLen = 5

// claimName is "<nodepool>-<5 random lowercase letters or digits>".
func claimName(nodePool string, r *rand.Rand) string {
	b := make([]byte, claimNameSuffixLen)
	for i := range b {
		b[i] = claimNameAlphabet[r.IntN(len(claimNameAlphabet))]
	}
	return nodePool + "-" + string(b)
}
