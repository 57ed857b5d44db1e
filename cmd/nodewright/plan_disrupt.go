package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	policyv1 "k8s.io/api/policy/v1"

	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/disruption"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/flows/disruptionrun"
)

// disruptHelp is what --help says about the consolidation dry run.
const disruptHelp = `With --disrupt, plan is the consolidation dry run: it plays the disruption function forward, one
tick (one run, every command of which completes before the next) after another, and prints every
command it would take until a tick decides nothing, then why each remaining node is kept.
Nodewright's nodes are those labelled karpenter.sh/nodepool with a NodePool of --nodepools and
karpenter.sh/initialized "true"; a node's price is the catalog offering of its instance-type, zone
and capacity-type labels. The files hold no pod event history, so every node's last pod event is
taken as long ago: consolidateAfter never holds a node back (Never still disables consolidation).
Scheduled budgets are treated as always active, so the answer holds at any hour. A replacement is
priced at its launch offering and named r-1, r-2...; it takes no other pods and is not disrupted in
the tick that launched it. PodDisruptionBudgets (--pdbs) are used as their status says and do not
change from tick to tick. A command taking nodes of a NodePool with consolidationPolicy Balanced
shows its score; the moves that policy rejects in the last tick are listed with theirs.`

// maxDisruptTicks bounds the dry run; stderr says when it was reached.
const maxDisruptTicks = 1000

// runPlanDisrupt is plan --disrupt: the consolidation dry run over the inputs plan already read.
func runPlanDisrupt(f planFlags, objs apis.Objects, in *scheduling.Input, stdout, stderr io.Writer, warn func(string)) int {
	din, ours, err := disruptInput(f, objs, in, warn)
	if err != nil {
		fmt.Fprintln(stderr, "nodewright plan: "+err.Error())
		return 1
	}
	start := time.Now()
	seq := disruption.Sequence(*din, disruption.SequenceOptions{MaxTicks: maxDisruptTicks, SchedulesAlwaysActive: true})
	elapsed := time.Since(start)
	if seq.Skipped != "" {
		fmt.Fprintln(stderr, "nodewright plan: "+seq.Skipped)
		return 1
	}
	if seq.TickLimitReached {
		warn(fmt.Sprintf("stopped after %d ticks with commands still being decided; the result is partial", maxDisruptTicks))
	}
	if seq.SearchStopped {
		warn("a search was cut short; some nodes may have been kept without being fully considered")
	}
	report := newDisruptReport(din, seq, ours, elapsed)
	if f.output == "json" {
		err = writeDisruptJSON(stdout, report)
	} else {
		err = writeDisruptTable(stdout, report, seq.Ticks)
	}
	if err != nil {
		fmt.Fprintln(stderr, "nodewright plan: "+err.Error())
		return 1
	}
	return 0
}

// disruptInput builds the engine's snapshot from what plan read, plus the PDBs. It returns the names
// of the nodes that are Nodewright's (a configured NodePool's label and karpenter.sh/initialized
// "true"). Errors name the file.
func disruptInput(f planFlags, objs apis.Objects, in *scheduling.Input, warn func(string)) (*disruption.Input, map[string]bool, error) {
	pools, err := disruptionrun.NodePoolsFrom(objs)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", f.nodePools, err)
	}
	// plan gave each pool the catalog computed with its EC2NodeClass; the engine launches from it too.
	types := map[string][]*scheduling.InstanceType{}
	for _, p := range in.NodePools {
		types[p.Name] = p.InstanceTypes
	}
	known := map[string]bool{}
	for i := range pools {
		pools[i].Scheduling.InstanceTypes = types[pools[i].Name()]
		known[pools[i].Name()] = true
	}
	out := &disruption.Input{
		Now: time.Now().UTC(), NodePools: pools, PendingPods: in.Pods,
		InstanceTypes: in.InstanceTypes, DaemonSets: in.DaemonSets, Unavailable: in.Unavailable,
		Namespaces: in.Namespaces, PersistentVolumeClaims: in.PersistentVolumeClaims,
		PersistentVolumes: in.PersistentVolumes, StorageClasses: in.StorageClasses, CSINodes: in.CSINodes,
		MinValuesPolicy: in.MinValuesPolicy,
		Options:         disruption.Options{SpotToSpotConsolidation: f.spotToSpot},
	}
	if f.pdbs != "" {
		if out.PDBs, err = readKube[policyv1.PodDisruptionBudget](f.pdbs, "PodDisruptionBudget", warn); err != nil {
			return nil, nil, err
		}
	}
	prices := scheduling.OfferingPrices(in.InstanceTypes)
	// A node of a pool is priced as the pool sees its type: with its NodeOverlays applied.
	poolPrices := map[string]map[scheduling.OfferingKey]float64{}
	if len(objs.NodeOverlays) > 0 {
		for name, ts := range types {
			poolPrices[name] = scheduling.OfferingPrices(ts)
		}
	}
	ours := map[string]bool{}
	unknownPools := map[string]int{}
	seen := map[string]bool{}
	for _, en := range in.Nodes {
		name := en.Node.Name
		if seen[name] {
			return nil, nil, fmt.Errorf("%s: node %s appears more than once", f.nodes, name)
		}
		seen[name] = true
		labels := en.Node.Labels
		n := disruption.Node{
			Node: en.Node, Pods: en.Pods, Claim: name, Initialized: en.Initialized,
			InstanceType: labels[scheduling.LabelInstanceType], Zone: labels[scheduling.LabelZone],
			CapacityType: labels[scheduling.LabelCapacityType],
			Allocatable:  en.Allocatable, Capacity: en.Capacity,
			// InitializedAt, LaunchedAt and LastPodEvent stay zero: no history, so "long ago".
		}
		pool := labels[scheduling.LabelNodePool]
		switch {
		case pool == "":
		case !known[pool]:
			unknownPools[pool]++
		default:
			n.NodePool = pool
			if labels[scheduling.LabelNodeInitalized] == "true" {
				ours[name] = true
				key := scheduling.OfferingKey{InstanceType: n.InstanceType, Zone: n.Zone, CapacityType: n.CapacityType}
				price, ok := prices[key]
				if pp, overlaid := poolPrices[pool][key]; overlaid {
					price, ok = pp, true
				}
				if !ok {
					warn(fmt.Sprintf("%s: node %s: the catalog has no offering %s/%s/%s (labels %s, %s, %s); its price is unknown",
						f.nodes, name, n.InstanceType, n.Zone, n.CapacityType, scheduling.LabelInstanceType, scheduling.LabelZone, scheduling.LabelCapacityType))
				}
				n.Price = price
			}
		}
		out.Nodes = append(out.Nodes, n)
	}
	for _, pool := range slices.Sorted(maps.Keys(unknownPools)) {
		warn(fmt.Sprintf("%s: %d node(s) carry NodePool %s, which --nodepools does not define: not Nodewright's", f.nodes, unknownPools[pool], pool))
	}
	return out, ours, nil
}
