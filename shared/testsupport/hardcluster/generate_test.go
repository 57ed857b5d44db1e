package hardcluster_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/flows/provisioning"
	"github.com/nodewright/nodewright/shared/testsupport/hardcluster"
)

// catalogPath is the 530-type catalog of the plan tests.
var catalogPath = filepath.Join("..", "..", "..", "cmd", "nodewright", "testdata", "instance-types.json")

func catalog(t testing.TB) []provisioning.CatalogEntry {
	t.Helper()
	c, err := hardcluster.ReadCatalog(catalogPath)
	require.NoError(t, err)
	return c
}

// TestAClusterHasTheHardTraits checks every trait the package doc promises on a 400-node cluster.
func TestAClusterHasTheHardTraits(t *testing.T) {
	c, err := hardcluster.Generate(hardcluster.Defaults(400, 7), catalog(t))
	require.NoError(t, err)
	s := c.Stats
	t.Logf("%+v", s)
	require.Len(t, c.Nodes, 400)
	assert.Equal(t, 400, s.Nodes)
	assert.Positive(t, s.Managed)
	assert.Positive(t, s.Uninitialized)
	assert.Positive(t, s.Oversized)
	ordinary := s.Nodes - s.Managed - s.Oversized
	assert.InDelta(t, 0.75, float64(s.Spot)/float64(ordinary), 0.1, "three quarters of the ordinary nodes are spot")
	assert.InDelta(t, 0.4, float64(s.PodsLeft)/float64(s.PodsPacked), 0.03, "60%% of the pods were deleted")

	perNode := map[string]int{}
	spreads := map[corev1.UnsatisfiableConstraintAction]bool{}
	guarded := 0
	used := map[string]corev1.ResourceList{}
	for _, p := range c.Pods {
		if p.OwnerReferences[0].Kind != "DaemonSet" {
			perNode[p.Spec.NodeName]++
		}
		if p.Labels["app"] == "guarded" {
			guarded++
		}
		for _, tsc := range p.Spec.TopologySpreadConstraints {
			spreads[tsc.WhenUnsatisfiable] = true
		}
		u := used[p.Spec.NodeName]
		if u == nil {
			u = corev1.ResourceList{}
			used[p.Spec.NodeName] = u
		}
		for k, q := range p.Spec.Containers[0].Resources.Requests {
			sum := u[k]
			sum.Add(q)
			u[k] = sum
		}
	}
	assert.Equal(t, 5, guarded)
	assert.True(t, spreads[corev1.DoNotSchedule] && spreads[corev1.ScheduleAnyway], "both kinds of zone spread")
	var counts []int
	for _, n := range c.Nodes {
		counts = append(counts, perNode[n.Name])
		for k, q := range used[n.Name] {
			alloc := n.Status.Allocatable[k]
			assert.LessOrEqual(t, q.Cmp(alloc), 0, "%s: %s requested %s of %s", n.Name, k, q.String(), alloc.String())
		}
	}
	slices.Sort(counts)
	median := counts[len(counts)/2]
	assert.GreaterOrEqual(t, median, 10, "pods left per node")
	assert.LessOrEqual(t, median, 40, "pods left per node")
	t.Logf("pods left per node: p10 %d, median %d, p90 %d", counts[len(counts)/10], median, counts[len(counts)*9/10])
}

// TestTheSeedMakesTheCluster: the same Config writes the same files, another seed other files.
func TestTheSeedMakesTheCluster(t *testing.T) {
	cat := catalog(t)
	write := func(seed uint64) []byte {
		c, err := hardcluster.Generate(hardcluster.Defaults(120, seed), cat)
		require.NoError(t, err)
		f, err := c.Write(t.TempDir())
		require.NoError(t, err)
		var all []byte
		for _, p := range []string{f.Nodes, f.Pods, f.PDBs} {
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			all = append(all, data...)
		}
		return all
	}
	assert.Equal(t, write(3), write(3))
	assert.NotEqual(t, write(3), write(4))
}

// TestABadConfigNamesItsField: every field that makes no cluster is named.
func TestABadConfigNamesItsField(t *testing.T) {
	cfg := hardcluster.Defaults(0, 1)
	cfg.SpotShare, cfg.GuardedNodes = 1.5, -1
	_, err := hardcluster.Generate(cfg, catalog(t))
	require.Error(t, err)
	for _, field := range []string{"Nodes", "SpotShare", "GuardedNodes"} {
		assert.Contains(t, err.Error(), field)
	}
	_, err = hardcluster.Generate(hardcluster.Defaults(10, 1), nil)
	assert.ErrorContains(t, err, "the catalog has no amd64")
}

// TestAWrittenCatalogReadsBack: instance-types.json is the plan format.
func TestAWrittenCatalogReadsBack(t *testing.T) {
	cat := catalog(t)
	c, err := hardcluster.Generate(hardcluster.Defaults(20, 1), cat)
	require.NoError(t, err)
	f, err := c.Write(t.TempDir())
	require.NoError(t, err)
	back, err := hardcluster.ReadCatalog(f.Catalog)
	require.NoError(t, err)
	assert.Equal(t, cat, back)
}
