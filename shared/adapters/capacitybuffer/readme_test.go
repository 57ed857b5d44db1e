package capacitybuffer

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// The README's example is what an operator copies: every document decodes strictly (no misspelt
// field), and with the Deployment it names (10 replicas of 1 CPU) both buffers resolve to the room the
// README says: two web chunks, and 20% of api's replicas under its 8-CPU limit.
func TestReadmeExampleResolvesAsDocumented(t *testing.T) {
	body, err := os.ReadFile("README.md")
	require.NoError(t, err)
	blocks := regexp.MustCompile("(?ms)^```yaml\n(.*?)^```").FindAllStringSubmatch(string(body), -1)
	require.Len(t, blocks, 1, "one example to copy")

	c := &fakeCluster{templates: map[string]*corev1.PodTemplate{}, workloads: map[string]fakeWorkload{
		"shop/api": {kind: KindDeployment, replicas: 10, template: podTemplate("1", "1Gi")}}}
	kinds := map[string]int{}
	for _, doc := range strings.Split(blocks[0][1], "\n---\n") {
		var meta struct{ Kind string }
		require.NoError(t, yaml.Unmarshal([]byte(doc), &meta))
		kinds[meta.Kind]++
		switch meta.Kind {
		case "PodTemplate":
			var pt corev1.PodTemplate
			require.NoError(t, yaml.UnmarshalStrict([]byte(doc), &pt), doc)
			c.templates[pt.Namespace+"/"+pt.Name] = &pt
		case Kind:
			var b CapacityBuffer
			require.NoError(t, yaml.UnmarshalStrict([]byte(doc), &b), doc)
			raw, err := json.Marshal(b)
			require.NoError(t, err)
			c.buffers = append(c.buffers, raw)
		default:
			t.Fatalf("unexpected kind %q in the example", meta.Kind)
		}
	}
	assert.Equal(t, map[string]int{"PodTemplate": 1, Kind: 2}, kinds)

	set, err := Read(context.Background(), c)
	require.NoError(t, err)
	require.Len(t, set.Buffers, 2)
	got := map[string]int32{}
	for _, b := range set.Buffers {
		assert.True(t, b.Ready, "%s: %s %s", b.Object.Key(), b.Reason, b.Message)
		got[b.Object.Key()] = b.Replicas
	}
	assert.Equal(t, map[string]int32{"shop/web": 2, "shop/api": 2}, got)
}
