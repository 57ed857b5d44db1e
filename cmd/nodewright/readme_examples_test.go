package main

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// configurationBlocks are the ```yaml fenced blocks of a Markdown file that hold Nodewright
// configuration (a NodePool, EC2NodeClass or NodeOverlay), in order; fragments of other objects are left
// out.
func configurationBlocks(t *testing.T, path string) []string {
	t.Helper()
	body, err := os.ReadFile(path)
	require.NoError(t, err)
	config := regexp.MustCompile(`(?m)^kind: (NodePool|EC2NodeClass|NodeOverlay)$`)
	var out []string
	for _, m := range regexp.MustCompile("(?ms)^```yaml\n(.*?)^```").FindAllStringSubmatch(string(body), -1) {
		if config.MatchString(m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}

// The configuration examples operators copy from the feature READMEs (static NodePools, NodeOverlay,
// the Balanced policy) pass `nodewright validate` with their gates on: each README has one, and none of
// them is refused. (The CapacityBuffer README's example is a cluster object, checked in
// shared/adapters/capacitybuffer.)
func TestReadmeConfigurationExamplesValidate(t *testing.T) {
	for _, readme := range []string{
		"../../shared/flows/provisioning/README.md", // static NodePools
		"../../shared/core/nodeoverlay/README.md",
		"../../shared/core/disruption/README.md", // consolidationPolicy: Balanced
	} {
		t.Run(filepath.Base(filepath.Dir(readme)), func(t *testing.T) {
			blocks := configurationBlocks(t, readme)
			require.NotEmpty(t, blocks, "an example to copy")
			for i, b := range blocks {
				f := filepath.Join(t.TempDir(), "example.yaml")
				require.NoError(t, os.WriteFile(f, []byte(b), 0o644))
				code, out, errOut := runValidateArgs(t, "", "-f", f, "--feature-gates", "StaticCapacity=true,NodeOverlay=true")
				assert.Equal(t, 0, code, "example %d of %s:\n%s\n%s", i+1, readme, b, errOut)
				assert.Contains(t, out, "valid", "example %d of %s", i+1, readme)
			}
		})
	}
}
