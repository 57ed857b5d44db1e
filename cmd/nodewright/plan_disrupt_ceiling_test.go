package main

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/core/apis/manifest"
	"github.com/nodewright/nodewright/shared/core/disruption"
	"github.com/nodewright/nodewright/shared/testsupport/hardcluster"
)

// BenchmarkDecideAtTheCeiling measures the disruption function's decision at Kubernetes' ceiling:
// a hard cluster (hardcluster.Defaults) of 5,000 nodes with a quarter of the packed pods deleted
// instead of 60%, which leaves about 150,000 pods. It reads the files as plan --disrupt does, then
// reports first-decision-s (one Decide on the cluster as it is, the first run's), solve-s (the
// whole dry-run sequence) and decision-s with decision-sims (one fresh Decide, nothing shared with
// the sequence, on the cluster the sequence ends with: a run that simulates every candidate and
// finds nothing, the longest a run takes). Not run by CI; several GB and a few minutes.
func BenchmarkDecideAtTheCeiling(b *testing.B) {
	catalog, err := hardcluster.ReadCatalog(filepath.Join("testdata", "instance-types.json"))
	require.NoError(b, err)
	cfg := hardcluster.Defaults(5000, 42)
	cfg.Removed = 0.265
	c, err := hardcluster.Generate(cfg, catalog)
	require.NoError(b, err)
	files, err := c.Write(b.TempDir())
	require.NoError(b, err)
	f := planFlags{pods: files.Pods, nodes: files.Nodes, pdbs: files.PDBs, nodePools: files.NodePools, instanceTypes: files.Catalog,
		daemonSets: files.DaemonSets, disrupt: true, output: "json"}
	warn := func(string) {}
	objs, problems := manifest.Check(nil, f.nodePools)
	require.Empty(b, problems)
	in, err := planInput(f, objs, warn)
	require.NoError(b, err)
	din, _, err := disruptInput(f, objs, in, warn)
	require.NoError(b, err)
	c = nil // the files hold the cluster now; the generator's copy would only weigh on the collector
	pods := float64(len(in.Pods) + countBound(din))
	for b.Loop() {
		b.ReportMetric(pods, "pods")
		start := time.Now()
		first := disruption.Decide(*din)
		b.ReportMetric(time.Since(start).Seconds(), "first-decision-s")
		require.Empty(b, first.Skipped)
		start = time.Now()
		seq := disruption.Sequence(*din, disruption.SequenceOptions{MaxTicks: maxDisruptTicks, SchedulesAlwaysActive: true})
		b.ReportMetric(time.Since(start).Seconds(), "solve-s")
		end := *din
		end.Nodes, end.Now = seq.Nodes, din.Now.Add(time.Duration(seq.Ticks)*time.Minute)
		start = time.Now()
		last := disruption.Decide(end)
		b.ReportMetric(time.Since(start).Seconds(), "decision-s")
		b.ReportMetric(float64(last.Simulations), "decision-sims")
		b.ReportMetric(float64(len(seq.Commands)), "commands")
	}
}

// countBound counts the pods bound to the input's nodes.
func countBound(in *disruption.Input) int {
	n := 0
	for _, node := range in.Nodes {
		n += len(node.Pods)
	}
	return n
}
