package apis_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/nodewright/nodewright/shared/core/apis"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestSetDefaultsGolden defaults each manifest under testdata/defaults and compares the result with its
// .golden file (go test -run TestSetDefaultsGolden -update rewrites them).
func TestSetDefaultsGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "defaults", "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			require.NoError(t, err)
			objs, err := apis.Decode(file, data)
			require.NoError(t, err)
			var out []byte
			for _, np := range objs.NodePools {
				np.SetDefaults()
				require.Empty(t, apis.ValidateNodePool(np))
				out = appendYAML(t, out, np)
			}
			for _, nc := range objs.EC2NodeClasses {
				nc.SetDefaults()
				require.Empty(t, apis.ValidateEC2NodeClass(nc))
				out = appendYAML(t, out, nc)
			}
			golden := strings.TrimSuffix(file, ".yaml") + ".golden"
			if *update {
				require.NoError(t, os.WriteFile(golden, out, 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "run with -update to create the golden file")
			assert.Equal(t, string(want), string(out))
		})
	}
}

func appendYAML(t *testing.T, out []byte, v any) []byte {
	t.Helper()
	data, err := yaml.Marshal(v)
	require.NoError(t, err)
	if len(out) > 0 {
		out = append(out, "---\n"...)
	}
	return append(out, data...)
}

func TestSetDefaultsIsIdempotentAndKeepsExplicitValues(t *testing.T) {
	np := baseNodePool(t) // already defaulted once
	before := np.DeepCopy()
	np.SetDefaults()
	assert.Equal(t, before, np)
	assert.Equal(t, apis.NillableDuration("720h"), np.Spec.Template.Spec.ExpireAfter)
	assert.Equal(t, "10%", np.Spec.Disruption.Budgets[0].Nodes)
	assert.Equal(t, "0", np.Spec.Disruption.Budgets[1].Nodes, "an explicit value is kept")

	empty := &apis.NodePool{}
	empty.Spec.Disruption.Budgets = []apis.Budget{}
	empty.SetDefaults()
	assert.Empty(t, empty.Spec.Disruption.Budgets, "an explicit empty budget list stays empty")
	assert.Equal(t, apis.ConsolidationPolicyWhenEmptyOrUnderutilized, empty.Spec.Disruption.ConsolidationPolicy)
	assert.Equal(t, apis.NillableDuration("0s"), empty.Spec.Disruption.ConsolidateAfter)
	assert.Nil(t, empty.Spec.Template.Spec.TerminationGracePeriod, "terminationGracePeriod has no default")

	claim := &apis.NodeClaim{}
	claim.SetDefaults()
	assert.Equal(t, apis.DefaultExpireAfter, claim.Spec.ExpireAfter)
}
