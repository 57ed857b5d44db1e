package apis_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestIsStatic(t *testing.T) {
	np := baseNodePool(t)
	assert.False(t, np.IsStatic())
	np.Spec.Replicas = ptr(int64(0))
	assert.True(t, np.IsStatic())
}
