package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/apis/manifest"
	"github.com/nodewright/nodewright/shared/core/nodeoverlay"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/core/settings"
	"github.com/nodewright/nodewright/shared/flows/provisioning"
)

func init() {
	register("plan", command{summary: "show the nodes Nodewright would launch for pods, without a cluster", run: runPlan})
}

// planFlags are the plan command's inputs.
type planFlags struct {
	pods, nodePools, instanceTypes, nodes, daemonSets, unavailable, volumes, namespaces, output string
	// disrupt runs the consolidation dry run (plan_disrupt.go) instead of the provisioning plan; pdbs
	// and spotToSpot are its inputs.
	disrupt, spotToSpot bool
	pdbs                string
	// gates are --feature-gates: NodeOverlays in --nodepools need NodeOverlay=true.
	gates settings.FeatureGates
}

// runPlan reads pods, NodePools and EC2NodeClasses, an instance-type catalog and optionally nodes,
// DaemonSets and unavailable offerings, runs the scheduler once and prints the plan. Bad input exits 1
// with the file and the problem; usage errors exit 2.
func runPlan(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("nodewright plan", flag.ContinueOnError)
	fset.SetOutput(stderr)
	var f planFlags
	fset.StringVar(&f.pods, "pods", "", "pods `FILE`: a PodList, a List or multi-document YAML/JSON of Pods (kubectl get pods -A -o yaml)")
	fset.StringVar(&f.nodePools, "nodepools", "", "Karpenter v1 NodePool and EC2NodeClass `FILE` or DIR")
	fset.StringVar(&f.instanceTypes, "instance-types", "", "instance-type catalog `FILE` (JSON)")
	fset.StringVar(&f.nodes, "nodes", "", "existing nodes `FILE`: a NodeList or multi-document Nodes; pods with spec.nodeName count on them")
	fset.StringVar(&f.daemonSets, "daemonsets", "", "DaemonSets `FILE`, whose pods add overhead to every node they run on")
	fset.StringVar(&f.unavailable, "unavailable", "", "JSON `FILE` listing {instanceType, zone, capacityType} offerings with no capacity")
	fset.StringVar(&f.volumes, "volumes", "", "`FILE` of PersistentVolumeClaims, PersistentVolumes, StorageClasses and CSINodes (kubectl get pvc,pv,sc,csinode -A -o yaml); pods' volumes pin their zones, CSINodes limit the volumes a node attaches")
	fset.StringVar(&f.namespaces, "namespaces", "", "Namespaces `FILE` (kubectl get ns -o yaml) whose labels pod affinity namespaceSelectors match")
	fset.StringVar(&f.output, "o", "table", "output `FORMAT`: table or json")
	fset.BoolVar(&f.disrupt, "disrupt", false, "consolidation dry run: print every command the disruption function would take, tick after tick, and why each other node is kept")
	fset.StringVar(&f.pdbs, "pdbs", "", "with --disrupt: PodDisruptionBudgets `FILE` (kubectl get pdb -A -o yaml); their status.disruptionsAllowed is used as is")
	fset.BoolVar(&f.spotToSpot, "spot-to-spot", false, "with --disrupt: allow replacing spot nodes with cheaper spot nodes (SpotToSpotConsolidation, off by default)")
	gates := addGatesFlag(fset)
	fset.Usage = func() {
		fmt.Fprintln(stderr, "Usage: nodewright plan --pods FILE --nodepools FILE --instance-types FILE [--nodes FILE]")
		fmt.Fprintln(stderr, "                      [--daemonsets FILE] [--unavailable FILE] [--volumes FILE]")
		fmt.Fprintln(stderr, "                      [--namespaces FILE] [-o table|json]")
		fmt.Fprintln(stderr, "       nodewright plan --disrupt --pods FILE --nodepools FILE --instance-types FILE --nodes FILE")
		fmt.Fprintln(stderr, "                      [--pdbs FILE] [--spot-to-spot] [other plan inputs] [-o table|json]")
		fmt.Fprintln(stderr)
		fmt.Fprintln(stderr, "Runs Nodewright's scheduler once over the given pods and prints the NodeClaims it would launch,")
		fmt.Fprintln(stderr, "the pods that go on existing nodes, and why any pod cannot be placed. Every unbound pod that is")
		fmt.Fprintln(stderr, "neither finished nor a DaemonSet or static pod is planned for, whatever its conditions say.")
		fmt.Fprintln(stderr)
		fmt.Fprintln(stderr, disruptHelp)
		fmt.Fprintln(stderr)
		fset.PrintDefaults()
	}
	if err := fset.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if f.pods == "" || f.nodePools == "" || f.instanceTypes == "" || fset.NArg() > 0 || (f.output != "table" && f.output != "json") {
		fset.Usage()
		return 2
	}
	var ok bool
	if f.gates, ok = gates.parse(stderr); !ok {
		return 2
	}
	if !f.disrupt && (f.pdbs != "" || f.spotToSpot) {
		fmt.Fprintln(stderr, "nodewright plan: --pdbs and --spot-to-spot need --disrupt")
		return 2
	}
	if f.disrupt && f.nodes == "" {
		fmt.Fprintln(stderr, "nodewright plan: --disrupt needs --nodes: consolidation acts on existing nodes")
		return 2
	}
	warn := func(s string) { fmt.Fprintln(stderr, "warning: "+s) }

	readStart := time.Now()
	objs, problems := manifest.Check(nil, f.nodePools)
	problems = append(problems, gateProblems(objs, f.gates)...)
	if len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintln(stderr, p)
		}
		fmt.Fprintf(stderr, "%d %s found\n", len(problems), plural(len(problems), "problem", "problems"))
		return 1
	}
	for _, w := range apis.MissingNodeClasses(objs) {
		warn(w)
	}
	in, err := planInput(f, objs, warn)
	if err != nil {
		fmt.Fprintln(stderr, "nodewright plan: "+err.Error())
		return 1
	}
	if f.disrupt {
		return runPlanDisrupt(f, objs, in, stdout, stderr, warn)
	}
	start := time.Now()
	times := planTimes{read: start.Sub(readStart)}
	in.StrictReservations = true // a provisioning plan, as the provisioner solves it
	plan, err := scheduling.Solve(*in)
	times.solve = time.Since(start)
	if err != nil {
		fmt.Fprintf(stderr, "nodewright plan: %s: %v\n", f.nodePools, err)
		return 1
	}
	if f.output == "json" {
		err = writePlanJSON(stdout, plan, times)
	} else {
		err = writePlanTable(stdout, plan, times, len(in.Pods))
	}
	if err != nil {
		fmt.Fprintln(stderr, "nodewright plan: "+err.Error())
		return 1
	}
	return 0
}

// planInput reads every input file into a scheduling.Input. Errors name the file.
func planInput(f planFlags, objs apis.Objects, warn func(string)) (*scheduling.Input, error) {
	pools, err := provisioning.NodePoolsFrom(objs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.nodePools, err)
	}
	catalog, err := readCatalogFile(f.instanceTypes)
	if err != nil {
		return nil, err
	}
	in := &scheduling.Input{NodePools: pools}
	if in.InstanceTypes, err = catalog.Build(scheduling.NodeClassConfig{}); err != nil {
		return nil, fmt.Errorf("%s: %w", f.instanceTypes, err)
	}
	if catalog.ComputesAllocatable() {
		if err := perNodeClassTypes(in.NodePools, objs, catalog); err != nil {
			return nil, fmt.Errorf("%s: %w", f.instanceTypes, err)
		}
	}
	if err := overlaidTypes(in, objs, warn); err != nil {
		return nil, fmt.Errorf("%s: %w", f.nodePools, err)
	}
	pods, err := readPods(f.pods, warn)
	if err != nil {
		return nil, err
	}
	var nodes []*corev1.Node
	if f.nodes != "" {
		if nodes, err = readNodes(f.nodes, warn); err != nil {
			return nil, err
		}
	}
	in.Pods, in.Nodes = splitPods(pods, nodes, warn)
	if f.daemonSets != "" {
		if in.DaemonSets, err = readDaemonSets(f.daemonSets, warn); err != nil {
			return nil, err
		}
	}
	if f.unavailable != "" {
		if in.Unavailable, err = readUnavailable(f.unavailable); err != nil {
			return nil, err
		}
	}
	if f.volumes != "" {
		if err := readVolumes(f.volumes, in, warn); err != nil {
			return nil, err
		}
	} else if usesClaims(in.Pods) {
		warn("some pods mount persistent volume claims but --volumes was not given; they are reported unschedulable")
	}
	if f.namespaces != "" {
		if in.Namespaces, err = readKube[corev1.Namespace](f.namespaces, "Namespace", warn); err != nil {
			return nil, err
		}
	}
	return in, nil
}

func readCatalogFile(path string) (*provisioning.CatalogFile, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	return provisioning.ReadCatalog(path, file)
}

// perNodeClassTypes gives each NodePool whose EC2NodeClass is known the catalog computed with that
// class's allocatable settings (maxPods, reservations, root volume...).
func perNodeClassTypes(pools []scheduling.NodePool, objs apis.Objects, catalog *provisioning.CatalogFile) error {
	built := map[string][]*scheduling.InstanceType{}
	for i := range pools {
		name := provisioning.NodeClassRefName(pools[i])
		nc := findNodeClass(objs, name)
		if nc == nil {
			continue
		}
		if _, ok := built[name]; !ok {
			cfg, err := provisioning.NodeClassConfigFrom(nc)
			if err != nil {
				return err
			}
			if built[name], err = catalog.Build(cfg); err != nil {
				return fmt.Errorf("EC2NodeClass %s: %w", name, err)
			}
		}
		pools[i].InstanceTypes = built[name]
	}
	return nil
}

// overlaidTypes applies the NodeOverlays of objs (the gate was checked) to every pool's instance types,
// as a run does before it solves; an overlay in conflict is a warning, as it is a problem in a run.
func overlaidTypes(in *scheduling.Input, objs apis.Objects, warn func(string)) error {
	if len(objs.NodeOverlays) == 0 {
		return nil
	}
	overlays, err := nodeoverlay.FromObjects(objs.NodeOverlays)
	if err != nil {
		return err
	}
	pools := make([]nodeoverlay.Pool, len(in.NodePools))
	for i, p := range in.NodePools {
		types := p.InstanceTypes
		if types == nil {
			types = in.InstanceTypes
		}
		pools[i] = nodeoverlay.Pool{Name: p.Name, Labels: p.Labels, Types: types}
	}
	res := nodeoverlay.Apply(overlays, pools)
	for _, c := range res.Conflicts {
		warn(c.String())
	}
	for i := range in.NodePools {
		in.NodePools[i].InstanceTypes = res.Types[in.NodePools[i].Name]
	}
	return nil
}

func findNodeClass(objs apis.Objects, name string) *apis.EC2NodeClass {
	for _, nc := range objs.EC2NodeClasses {
		if nc.Name == name {
			return nc
		}
	}
	return nil
}
