package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/operator/logging"

	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/testsupport/hardcluster"
)

// disruptRow is one case's comparison over the runs.
type disruptRow struct {
	Name         string
	Nodes, Pods  int
	CostBefore   float64
	Ours         []nodewrightOutcome
	Karpenter    []karpenterOutcome
	LowerBound   float64
	LowerBoundOK bool
}

// disruptConfig is what -disrupt compares and how.
type disruptConfig struct {
	Dirs []string
	// Fragmented are node counts of clusters to generate (generateFragmented) with Seed; Hard of
	// hard clusters (shared/testsupport/hardcluster.Defaults) with Seed.
	Fragmented, Hard []int
	Seed             uint64
	Runs             int
	Options          disruptOptions
	// Repo is the main module: ./cmd/nodewright is built from it, and the generated clusters take
	// its plan --disrupt testdata catalog and DaemonSets.
	Repo string
}

// runDisrupt compares Nodewright's dry run with Karpenter's disruption controller on each input.
func runDisrupt(out, progress io.Writer, cfg disruptConfig) error {
	if cfg.Runs < 1 {
		return fmt.Errorf("-runs: %d, need at least 1", cfg.Runs)
	}
	if os.Getenv("KC_DEBUG") != "" {
		log.SetLogger(zap.New(zap.UseDevMode(true), zap.WriteTo(progress)))
	}
	log.SetLogger(logging.NopLogger)
	stopAPIServersOnSignal()
	tmp, err := os.MkdirTemp("", "karpentercompare-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	type source struct{ name, dir string }
	var sources []source
	for _, dir := range cfg.Dirs {
		sources = append(sources, source{caseName(dir), dir})
	}
	for _, n := range cfg.Fragmented {
		if n <= 0 {
			return fmt.Errorf("-fragmented: %d is not a positive node count", n)
		}
		name := fmt.Sprintf("fragmented-%d-seed%d", n, cfg.Seed)
		dir := filepath.Join(tmp, name)
		if err := generateFragmented(dir, filepath.Join(cfg.Repo, "cmd", "nodewright", "testdata", "disrupt"), n, cfg.Seed); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		sources = append(sources, source{name, dir})
	}
	for _, n := range cfg.Hard {
		if n <= 0 {
			return fmt.Errorf("-hard: %d is not a positive node count", n)
		}
		name := fmt.Sprintf("hard-%d-seed%d", n, cfg.Seed)
		dir := filepath.Join(tmp, name)
		if err := writeHardCluster(dir, filepath.Join(cfg.Repo, "cmd", "nodewright", "testdata", "instance-types.json"), n, cfg.Seed); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		sources = append(sources, source{name, dir})
	}
	var cases []*disruptCase
	for _, s := range sources {
		files, err := findDisruptFiles(s.dir)
		if err != nil {
			return err
		}
		c, err := readDisruptCase(s.name, files)
		if err != nil {
			return err
		}
		cases = append(cases, c)
	}
	fmt.Fprintln(progress, "building nodewright")
	bin, err := buildNodewright(cfg.Repo, tmp)
	if err != nil {
		return err
	}
	var rows []disruptRow
	for _, c := range cases {
		r, err := compareDisruption(c, bin, tmp, cfg.Runs, cfg.Options, progress)
		if err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
		rows = append(rows, r)
	}
	printDisruptTable(out, rows, cfg.Runs, cfg.Options)
	return nil
}

// writeHardCluster writes hardcluster.Defaults(n, seed), generated from the catalog at catalogPath,
// into dir.
func writeHardCluster(dir, catalogPath string, n int, seed uint64) error {
	catalog, err := hardcluster.ReadCatalog(catalogPath)
	if err != nil {
		return err
	}
	c, err := hardcluster.Generate(hardcluster.Defaults(n, seed), catalog)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	_, err = c.Write(dir)
	return err
}

// caseName is a directory's last two path elements (cmd/nodewright/testdata/disrupt/repack is
// "disrupt/repack").
func caseName(dir string) string {
	dir = filepath.Clean(dir)
	return filepath.Join(filepath.Base(filepath.Dir(dir)), filepath.Base(dir))
}

func compareDisruption(c *disruptCase, bin, tmp string, runs int, opts disruptOptions, progress io.Writer) (disruptRow, error) {
	registerCatalogLabels(c.Types)
	r := disruptRow{Name: c.Name, Nodes: len(c.Nodes), Pods: countPods(c.Pods)}
	lb, err := lowerBound(bin, c, tmp)
	if err != nil {
		fmt.Fprintf(progress, "%s: no lower bound: %v\n", c.Name, err)
	} else {
		r.LowerBound, r.LowerBoundOK = lb, true
	}
	for i := range runs {
		n, err := runNodewrightDisruption(bin, c, opts)
		if err != nil {
			return r, err
		}
		fmt.Fprintf(progress, "%s run %d/%d: nodewright $%.4f -> $%.4f/h, %d commands, solve %s\n",
			c.Name, i+1, runs, n.CostBefore, n.CostAfter, n.Commands, n.Solve.Round(msRound))
		k, err := runKarpenterDisruption(c, opts, progress)
		if err != nil {
			return r, err
		}
		state := "fixed point"
		if k.StillDeciding {
			state = "still deciding"
		}
		fmt.Fprintf(progress, "%s run %d/%d: karpenter $%.4f -> $%.4f/h, %d commands, decision %s, total %s, load %s, %d passes (%d cut by a timeout), %s\n",
			c.Name, i+1, runs, k.CostBefore, k.CostAfter, k.Commands, k.Decision.Round(msRound), k.Total.Round(msRound), k.Load.Round(msRound), k.Passes, k.Timeouts, state)
		if diff := k.CostBefore - n.CostBefore; diff > 1e-5 || diff < -1e-5 {
			return r, fmt.Errorf("cost before differs: karpenter side $%.6f/h, nodewright $%.6f/h", k.CostBefore, n.CostBefore)
		}
		if k.Unplaced > 0 {
			return r, fmt.Errorf("karpenter's commands left %d pod(s) unplaced", k.Unplaced)
		}
		r.CostBefore = n.CostBefore
		r.Ours, r.Karpenter = append(r.Ours, n), append(r.Karpenter, k)
	}
	return r, nil
}

// registerCatalogLabels makes every label the catalog's instance types define well known to
// Karpenter, as a cloud provider registers its own (karpenter.k8s.aws/instance-category...), so that
// NodePool requirements and pod selectors on them work the same on both sides.
func registerCatalogLabels(types map[string][]*scheduling.InstanceType) {
	for _, list := range types {
		for _, it := range list {
			for _, key := range it.Requirements.Keys() {
				karpv1.WellKnownLabels.Insert(key)
			}
		}
	}
}

// countPods counts the bound pods that are neither finished nor DaemonSet pods.
func countPods(pods []*corev1.Pod) int {
	n := 0
	for _, p := range pods {
		if p.Spec.NodeName != "" && !ownedByDaemonSet(p) && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			n++
		}
	}
	return n
}

// splitDirs splits the -disrupt flag's comma-separated directories.
func splitDirs(s string) []string {
	var out []string
	for _, d := range strings.Split(s, ",") {
		if d = strings.TrimSpace(d); d != "" {
			out = append(out, d)
		}
	}
	return out
}

func medianOf[T any](xs []T, key func(T) float64) T {
	sorted := slices.Clone(xs)
	slices.SortFunc(sorted, func(a, b T) int {
		switch ka, kb := key(a), key(b); {
		case ka < kb:
			return -1
		case ka > kb:
			return 1
		}
		return 0
	})
	return sorted[(len(sorted)-1)/2]
}

func medianDuration(ds []time.Duration) time.Duration {
	return medianOf(ds, func(d time.Duration) float64 { return float64(d) })
}
