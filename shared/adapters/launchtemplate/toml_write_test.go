package launchtemplate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteTOMLRoundTrips(t *testing.T) {
	in := tomlTable{
		"top": int64(1),
		"settings": tomlTable{
			"kubernetes": tomlTable{
				"name":        "a \"b\"\n\\c\x01",
				"node-labels": tomlTable{"karpenter.sh/nodepool": "x", "": "empty key"},
				"f":           2.0,
				"list":        []any{tomlTable{"a": true}, []any{}},
			},
			"empty": tomlTable{},
		},
	}
	text := writeTOML(in)
	back, err := parseTOML(text)
	require.NoError(t, err, text)
	assert.Equal(t, in, back)
	assert.Equal(t, text, writeTOML(back), "writing is deterministic")
}
