package launchtemplate

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseTOML(t *testing.T) {
	doc := `# comment
title = "top" # trailing comment
[settings.kubernetes]
max-pods = 1_10
ratio = 0.5
big = 1e3
hex = 0x1F
enabled = true
"quoted.key" = 'literal \n stays'
dotted.inner = "x"
multi = """
line one
line \
   two"""
raw = '''
C:\path'''
escapes = "tab\there \"q\" \u00e9"
list = [
  "a", # comment in array
  ["b", 'c'],
]
inline = { a = 1, "b c" = { d = false } }
empty = {}

[settings.other]
`
	got, err := parseTOML(doc)
	require.NoError(t, err)
	want := tomlTable{
		"title": "top",
		"settings": tomlTable{
			"kubernetes": tomlTable{
				"max-pods": int64(110), "ratio": 0.5, "big": 1000.0, "hex": int64(31), "enabled": true,
				"quoted.key": `literal \n stays`,
				"dotted":     tomlTable{"inner": "x"},
				"multi":      "line one\nline two",
				"raw":        `C:\path`,
				"escapes":    "tab\there \"q\" é",
				"list":       []any{"a", []any{"b", "c"}},
				"inline":     tomlTable{"a": int64(1), "b c": tomlTable{"d": false}},
				"empty":      tomlTable{},
			},
			"other": tomlTable{},
		},
	}
	assert.Equal(t, want, got)
}

func TestParseTOMLSpecialFloats(t *testing.T) {
	got, err := parseTOML("a = inf\nb = -inf\nc = nan\n")
	require.NoError(t, err)
	assert.True(t, math.IsInf(got["a"].(float64), 1))
	assert.True(t, math.IsInf(got["b"].(float64), -1))
	assert.True(t, math.IsNaN(got["c"].(float64)))
}

func TestParseTOMLErrors(t *testing.T) {
	for name, doc := range map[string]string{
		"array of tables":      "[[settings.x]]\na = 1\n",
		"date":                 "d = 1979-05-27\n",
		"duplicate key":        "a = 1\na = 2\n",
		"value then table":     "a = 1\n[a]\n",
		"dotted through value": "a = 1\na.b = 2\n",
		"no equals":            "a 1\n",
		"no value":             "a =\n",
		"unterminated string":  "a = \"x\n",
		"unterminated literal": "a = 'x",
		"unterminated multi":   "a = '''x",
		"unterminated array":   "a = [1, 2",
		"bad array separator":  "a = [1 2]",
		"unterminated inline":  "a = { b = 1",
		"bad escape":           `a = "\q"`,
		"short unicode":        `a = "\u12"`,
		"two values on a line": "a = 1 b = 2\n",
		"unclosed header":      "[a\n",
		"empty key":            "= 1\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := parseTOML(doc)
			assert.Error(t, err)
		})
	}
}

func FuzzBottlerocketMerge(f *testing.F) {
	for _, seed := range []string{"", userBottlerocket, "[settings]\nkubernetes = 1\n", "a = [{b = 'c'}]", "x = \"\\u00\""} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, userData string) {
		o := testOptions("Bottlerocket")
		o.UserData = userData
		out, err := bottlerocketUserData(o)
		if err != nil {
			return
		}
		back, err := parseTOML(out)
		require.NoError(t, err, "merged TOML must parse:\n%s", out)
		kube := back["settings"].(tomlTable)["kubernetes"].(tomlTable)
		assert.Equal(t, "prod", kube["cluster-name"])
		assert.Contains(t, kube["node-taints"].(tomlTable), "karpenter.sh/unregistered")
	})
}
