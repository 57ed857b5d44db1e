package provisioning

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestClaimName(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	a, b := claimName("default", r), claimName("default", r)
	assert.Regexp(t, `^default-[a-z0-9]{5}$`, a)
	assert.NotEqual(t, a, b)
	assert.Equal(t, a, claimName("default", rand.New(rand.NewPCG(1, 2))), "the injected source decides")
}
