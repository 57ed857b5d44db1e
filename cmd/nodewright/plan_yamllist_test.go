package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// repeatItems builds a kubectl-style List of n copies of item (YAML lines of one entry, "- " first).
func repeatItems(head, item, tail string, n int) string {
	var b strings.Builder
	b.WriteString(head)
	for i := range n {
		b.WriteString(strings.ReplaceAll(item, "NAME", fmt.Sprintf("pod-%d", i)))
	}
	b.WriteString(tail)
	return b.String()
}

const listItem = `- apiVersion: v1
  kind: Pod
  metadata:
    name: NAME
    labels: {app: web}
  # a comment inside an item

  spec:
    containers:
    - name: app
      args:
      - |
        multi-line
        script
      resources: {requests: {cpu: 250m}}
`

// TestListYAMLToJSONMatchesWholeConversion checks that converting a list's items apart decodes to the
// same value as converting the document whole, for kubectl's layouts and the generated mix, and that
// documents the split cannot take (aliases across items, indented entries, bad YAML) are converted whole
// with yaml.YAMLToJSON's own error.
func TestListYAMLToJSONMatchesWholeConversion(t *testing.T) {
	mix, err := os.ReadFile(writeMixInputs(t, 500)[2])
	require.NoError(t, err)
	sample, err := os.ReadFile(filepath.Join("testdata", "plan", "pods.yaml"))
	require.NoError(t, err)
	cases := map[string]string{
		"generated mix, keys after items": string(mix),
		"sample, keys before items":       string(sample),
		"keys on both sides":              repeatItems("apiVersion: v1\nitems:\n", listItem, "kind: List\nmetadata: {resourceVersion: \"\"}\n", 100),
		"no trailing newline":             strings.TrimSuffix(repeatItems("kind: PodList\nitems:\n", listItem, "", 100), "\n"),
		"only items":                      repeatItems("items:\n", listItem, "", 100),
		"alias of another item's anchor":  repeatItems("kind: List\nitems:\n- &first {kind: Pod, metadata: {name: a}}\n", "- *first\n", "", 100),
		"indented entries":                repeatItems("kind: List\nitems:\n", "  - {kind: Pod, metadata: {name: NAME}}\n", "", 100),
		"few items":                       repeatItems("kind: List\nitems:\n", listItem, "", 3),
		"empty":                           "",
		"a single object":                 "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n",
	}
	split := map[string]bool{"generated mix, keys after items": true, "sample, keys before items": false,
		"keys on both sides": true, "no trailing newline": true, "only items": true}
	for name, doc := range cases {
		t.Run(name, func(t *testing.T) {
			if split[name] {
				_, items, ok := splitYAMLList([]byte(doc))
				assert.True(t, ok && len(items) >= minSplitItems, "the items are converted apart")
			}
			want, wantErr := yaml.YAMLToJSON([]byte(doc))
			got, err := listYAMLToJSON([]byte(doc))
			require.NoError(t, wantErr)
			require.NoError(t, err)
			var wantValue, gotValue any
			require.NoError(t, json.Unmarshal(want, &wantValue))
			require.NoError(t, json.Unmarshal(got, &gotValue))
			assert.Equal(t, wantValue, gotValue)
		})
	}

	bad := repeatItems("kind: List\nitems:\n", listItem, "", 100) + "- {kind: Pod, metadata: {name: [unclosed}\n"
	_, wantErr := yaml.YAMLToJSON([]byte(bad))
	_, err = listYAMLToJSON([]byte(bad))
	require.Error(t, wantErr)
	assert.EqualError(t, err, wantErr.Error(), "an item that does not convert alone is converted whole, with its error")
}

// TestSplitYAMLList checks which documents are split and into what.
func TestSplitYAMLList(t *testing.T) {
	rest, items, ok := splitYAMLList([]byte("apiVersion: v1\nitems:\n- a: 1\n  b: 2\n-\n  c: 3\nkind: List\n"))
	require.True(t, ok)
	assert.Equal(t, "apiVersion: v1\nkind: List\n", string(rest))
	assert.Equal(t, []string{"- a: 1\n  b: 2\n", "-\n  c: 3\n"}, func() []string {
		var out []string
		for _, it := range items {
			out = append(out, string(it))
		}
		return out
	}())
	for _, doc := range []string{"kind: Pod\n", "items:\n  - a: 1\n", "items:\n- a\nitems:\n- b\n", "items: []\n"} {
		_, _, ok := splitYAMLList([]byte(doc))
		assert.False(t, ok, doc)
	}
}

// FuzzListYAMLToJSON checks that a list of minSplitItems entries built from a fuzzed head and entry
// converts to what converting it whole gives: the same value, or the same error.
func FuzzListYAMLToJSON(f *testing.F) {
	f.Add("apiVersion: v1\n", listItem, "kind: List\n")
	f.Add("", "- &a {x: 1}\n", "")
	f.Add("kind: List\n", "-\n  a: |\n    text\n", "metadata:\n  name: x\n")
	f.Add("k: 1\n", "- a: 1\n# c\nb: 2\n", "")
	f.Fuzz(func(t *testing.T, head, item, tail string) {
		doc := []byte(repeatItems(head+"items:\n", item, tail, minSplitItems))
		want, wantErr := yaml.YAMLToJSON(doc)
		got, err := listYAMLToJSON(doc)
		if wantErr != nil {
			if err == nil || err.Error() != wantErr.Error() {
				t.Fatalf("whole: %v; split: %v", wantErr, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("whole converts, split fails: %v", err)
		}
		var wantValue, gotValue any
		if json.Unmarshal(want, &wantValue) != nil {
			return
		}
		if err := json.Unmarshal(got, &gotValue); err != nil {
			t.Fatalf("split gives invalid JSON %q: %v", got, err)
		}
		assert.Equal(t, wantValue, gotValue)
	})
}
