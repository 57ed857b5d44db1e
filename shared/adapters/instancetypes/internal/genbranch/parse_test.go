package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const sample = `package instancetype

type VPCLimits struct {
	Interface            int
	IsTrunkingCompatible bool
	BranchInterface      int
}

var Limits = map[string]*VPCLimits{
	"m5.large": {
		Interface:            3,
		IsTrunkingCompatible: true,
		BranchInterface:      9,
	},
	"t3.micro": {
		Interface:            2,
		IsTrunkingCompatible: false,
		BranchInterface:      0,
	},
	"c1.medium": {
		Interface: 2,
	},
}
`

func TestParseLimitsKeepsTrunkingTypes(t *testing.T) {
	got, err := parseLimits([]byte(sample))
	require.NoError(t, err)
	assert.Equal(t, map[string]int64{"m5.large": 9}, got)
}

func TestParseLimitsRefusesWhatItCannotRead(t *testing.T) {
	_, err := parseLimits([]byte("package x\nvar Other = 1\n"))
	assert.ErrorContains(t, err, "no `var Limits")
	_, err = parseLimits([]byte("package x\nvar Limits = map[string]*V{\"a.b\": {IsTrunkingCompatible: true}}\n"))
	assert.ErrorContains(t, err, "without a BranchInterface")
}
