package state

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestInServiceEndsWhereTheWayOutBegins(t *testing.T) {
	for _, l := range []Lifecycle{Pending, Launched, Registered, Initialized} {
		assert.True(t, l.InService(), l)
	}
	for _, l := range []Lifecycle{Draining, Terminating, Deleted} {
		assert.False(t, l.InService(), l)
	}
}
