package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDNSIPIsTheTenthServiceAddress(t *testing.T) {
	for cidr, want := range map[string]string{"10.100.0.0/16": "10.100.0.10", "172.20.0.0/16": "172.20.0.10", "10.96.0.0/12": "10.96.0.10"} {
		got, err := dnsIP(cidr)
		assert.NoError(t, err)
		assert.Equal(t, want, got, cidr)
	}
	_, err := dnsIP("fd00::/108")
	assert.Error(t, err)
}
