package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/karpenter/pkg/operator/logging"
)

// poolName is the one NodePool of every input.
const poolName = "default"

// row is one input's comparison.
type row struct {
	Input           string
	Pods            int
	Karpenter, Ours summary
}

func main() {
	pods := flag.String("pods", "1000,5000", "comma-separated pod counts of the Karpenter benchmark mix (empty for none)")
	scales := flag.String("scales", "20", "comma-separated scales of the realistic mixed and zone-spread workloads, 100 pods each (empty for none)")
	runs := flag.Int("runs", 3, "runs per solver and input; timings are medians")
	disrupt := flag.String("disrupt", "", "comma-separated directories of `nodewright plan --disrupt` inputs: compare consolidation with Karpenter's disruption controller instead of provisioning")
	spotToSpot := flag.Bool("spot-to-spot", false, "with -disrupt: spot-to-spot consolidation on both sides (Karpenter's feature gate, Nodewright's --spot-to-spot)")
	capacity := flag.Duration("cap", 45*time.Minute, "with -disrupt: wall-clock cap of one Karpenter run; a run still deciding then is reported so")
	repo := flag.String("repo", "../../..", "with -disrupt, -fragmented or -hard: the main module, whose ./cmd/nodewright is built")
	fragmented := flag.String("fragmented", "", "comma-separated node counts of fragmented clusters to generate and compare as -disrupt does")
	hard := flag.String("hard", "", "comma-separated node counts of hard clusters (shared/testsupport/hardcluster.Defaults, testdata's 530-type catalog) to generate and compare as -disrupt does")
	seed := flag.Uint64("seed", 42, "with -fragmented or -hard: the generators' seed")
	flag.Parse()
	var err error
	if *disrupt != "" || *fragmented != "" || *hard != "" {
		var counts, hardCounts []int
		if counts, err = parseInts("-fragmented", *fragmented); err == nil {
			if hardCounts, err = parseInts("-hard", *hard); err == nil {
				err = runDisrupt(os.Stdout, os.Stderr, disruptConfig{
					Dirs: splitDirs(*disrupt), Fragmented: counts, Hard: hardCounts, Seed: *seed, Runs: *runs,
					Options: disruptOptions{SpotToSpot: *spotToSpot, Cap: *capacity}, Repo: *repo,
				})
			}
		}
	} else {
		err = run(os.Stdout, os.Stderr, *pods, *scales, *runs)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "karpentercompare:", err)
		os.Exit(1)
	}
}

func run(out, progress io.Writer, podsFlag, scalesFlag string, runs int) error {
	if runs < 1 {
		return fmt.Errorf("-runs: %d, need at least 1", runs)
	}
	mixPods, err := parseInts("-pods", podsFlag)
	if err != nil {
		return err
	}
	scales, err := parseInts("-scales", scalesFlag)
	if err != nil {
		return err
	}
	inputs, err := buildInputs(mixPods, scales)
	if err != nil {
		return err
	}
	log.SetLogger(logging.NopLogger)
	var rows []row
	for _, in := range inputs {
		r, err := compare(in, runs, progress)
		if err != nil {
			return fmt.Errorf("%s, %d pods: %w", in.Name, len(in.Pods), err)
		}
		rows = append(rows, r)
	}
	printTable(out, rows, runs)
	return nil
}

// compare runs both solvers runs times on the input, alternating them.
func compare(in benchInput, runs int, progress io.Writer) (row, error) {
	types, err := toKarpenterInstanceTypes(in.Types)
	if err != nil {
		return row{}, err
	}
	pool := karpenterNodePool(poolName)
	var karp, ours []result
	for i := range runs {
		k, err := runKarpenter(in, pool, types)
		if err != nil {
			return row{}, err
		}
		n, err := runNodewright(in, poolName)
		if err != nil {
			return row{}, err
		}
		if k.Unschedulable > 0 || n.Unschedulable > 0 {
			return row{}, fmt.Errorf("unschedulable pods: karpenter %d, nodewright %d", k.Unschedulable, n.Unschedulable)
		}
		fmt.Fprintf(progress, "%s %d pods run %d/%d: karpenter %d claims $%.4f/h in %s; nodewright %d claims $%.4f/h in %s\n",
			in.Name, len(in.Pods), i+1, runs, k.Claims, k.Cost, k.Solve.Round(msRound), n.Claims, n.Cost, n.Solve.Round(msRound))
		karp, ours = append(karp, k), append(ours, n)
	}
	return row{Input: in.Name, Pods: len(in.Pods), Karpenter: summarize(karp), Ours: summarize(ours)}, nil
}

func parseInts(name, s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %q is not an integer", name, f)
		}
		out = append(out, n)
	}
	return out, nil
}
