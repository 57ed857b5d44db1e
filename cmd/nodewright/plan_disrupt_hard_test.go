package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/testsupport/hardcluster"
)

// hardCluster is a generated hard cluster (shared/testsupport/hardcluster) written to files, with
// the pods left on the NodePool's nodes as pending pods for the LP bounds.
type hardCluster struct {
	files              disruptFiles
	stats              hardcluster.Stats
	remaining, movable string
	pinnedPrice        float64
}

// writeHard generates hardcluster.Defaults(n, seed) from testdata's 530-type catalog into a temp dir.
func writeHard(tb testing.TB, n int, seed uint64) hardCluster {
	return writeHardConfig(tb, hardcluster.Defaults(n, seed))
}

// writeHardConfig generates the hard cluster of cfg from testdata's catalog into a temp dir.
func writeHardConfig(tb testing.TB, cfg hardcluster.Config) hardCluster {
	tb.Helper()
	catalog, err := hardcluster.ReadCatalog(filepath.Join("testdata", "instance-types.json"))
	require.NoError(tb, err)
	c, err := hardcluster.Generate(cfg, catalog)
	require.NoError(tb, err)
	dir := tb.TempDir()
	f, err := c.Write(dir)
	require.NoError(tb, err)
	h := hardCluster{
		files: disruptFiles{nodes: f.Nodes, pods: f.Pods, pdbs: f.PDBs, nodePools: f.NodePools, catalog: f.Catalog, daemonSets: f.DaemonSets},
		stats: c.Stats, remaining: filepath.Join(dir, "remaining.json"), movable: filepath.Join(dir, "movable.json"),
		pinnedPrice: c.PinnedPricePerHour(),
	}
	require.NoError(tb, c.WriteRemaining(h.remaining, false))
	require.NoError(tb, c.WriteRemaining(h.movable, true))
	return h
}

// TestPlanDisruptHardCluster holds the dry run of a small generated hard cluster to the contract:
// the managed-node-group and uninitialized nodes are never disrupted, the guarded pods' nodes are
// kept for their PDB, and consolidation saves money.
func TestPlanDisruptHardCluster(t *testing.T) {
	h := writeHard(t, 80, 11)
	out := runDisruptJSON(t, h.files)
	violations, sum, err := checkDisruptContract(h.files, out)
	require.NoError(t, err)
	assert.Empty(t, violations)
	assert.NotEmpty(t, sum.disrupted)
	var doc contractDoc
	require.NoError(t, json.Unmarshal(out, &doc))
	assert.InDelta(t, h.stats.PoolPricePerHour, *doc.CostBeforePerHour, 1e-3, "cost before is the NodePool's initialized nodes")
	assert.Less(t, *doc.CostAfterPerHour, *doc.CostBeforePerHour)
	reasons := ""
	for _, r := range sum.kept {
		reasons += r + "\n"
	}
	assert.Contains(t, reasons, "PodDisruptionBudget")
}

// BenchmarkPlanDisruptHard runs the whole dry run on generated hard clusters
// (hardcluster.Defaults: mostly spot, oversized half-empty nodes, zone spreads on 40% of the
// deployments, a zero-disruption PDB, managed and uninitialized nodes), with Karpenter's default
// rules and with spot-to-spot on, and reports what runDisruptBench reports plus the cluster's size.
func BenchmarkPlanDisruptHard(b *testing.B) {
	// The 2,000-node cluster has 40,000 pods; Defaults leaves about 31,000 there, so the
	// last case deletes fewer (39,873 pods left).
	pods40k := hardcluster.Defaults(2000, 42)
	pods40k.Removed = 0.507
	for _, c := range []struct {
		name string
		cfg  hardcluster.Config
	}{{"nodes=200", hardcluster.Defaults(200, 42)}, {"nodes=2000", hardcluster.Defaults(2000, 42)}, {"nodes=2000-pods=40k", pods40k}} {
		for _, spotToSpot := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/spot-to-spot=%v", c.name, spotToSpot), func(b *testing.B) {
				h := writeHardConfig(b, c.cfg)
				lb := planLowerBound(b, h.files, h.remaining)
				pinnedLB := h.pinnedPrice + planLowerBound(b, h.files, h.movable)
				runDisruptBench(b, h.files, spotToSpot, lb, pinnedLB)
				b.ReportMetric(float64(h.stats.PodsLeftOnPool), "pods-left")
			})
		}
	}
}
