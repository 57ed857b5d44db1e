package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// planJSON is the -o json document: the plan's own fields (see scheduling.Plan for their meaning) plus
// the cost ratio, how long reading and checking the input files took (readSeconds) and how long the
// solve took (solveSeconds, solveMillis). Lists are never null.
type planJSON struct {
	NodeClaims        []scheduling.ClaimPlan     `json:"nodeClaims"`
	ExistingNodes     []scheduling.NodePlacement `json:"existingNodes"`
	Unschedulable     []scheduling.PodFailure    `json:"unschedulable"`
	TotalPricePerHour float64                    `json:"totalPricePerHour"`
	LowerBoundPerHour float64                    `json:"lowerBoundPerHour"`
	CostRatio         float64                    `json:"costRatio"`
	ReadSeconds       float64                    `json:"readSeconds"`
	SolveSeconds      float64                    `json:"solveSeconds"`
	SolveMillis       float64                    `json:"solveMillis"`
}

// planTimes is how long the command read its input files (decoding and checking them, building the
// catalog) and how long the solve took.
type planTimes struct{ read, solve time.Duration }

func writePlanJSON(w io.Writer, p *scheduling.Plan, times planTimes) error {
	out := planJSON{
		NodeClaims: p.NewClaims, ExistingNodes: p.ExistingNodes, Unschedulable: p.Unschedulable,
		TotalPricePerHour: p.TotalPrice, LowerBoundPerHour: p.LowerBound, CostRatio: p.CostRatio(),
		ReadSeconds: times.read.Seconds(), SolveSeconds: times.solve.Seconds(), SolveMillis: float64(times.solve.Microseconds()) / 1000,
	}
	if out.NodeClaims == nil {
		out.NodeClaims = []scheduling.ClaimPlan{}
	}
	if out.ExistingNodes == nil {
		out.ExistingNodes = []scheduling.NodePlacement{}
	}
	if out.Unschedulable == nil {
		out.Unschedulable = []scheduling.PodFailure{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// tableOptions is how many instance-type options a table row shows.
const tableOptions = 3

// writePlanTable prints the plan for people: one row per new claim, the existing nodes that take pods,
// one row per unschedulable pod, then totals.
func writePlanTable(w io.Writer, p *scheduling.Plan, times planTimes, pending int) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	onClaims, onNodes := 0, 0
	if len(p.NewClaims) > 0 {
		fmt.Fprintln(tw, "NODEPOOL\tINSTANCE TYPE\tZONE\tCAPACITY\t$/H\tPODS\tOPTIONS")
		for _, c := range p.NewClaims {
			onClaims += len(c.PodNames)
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.4f\t%d\t%s\n", c.NodePool, c.InstanceType, c.Zone, c.CapacityType, c.Price, len(c.PodNames), options(c.InstanceTypeOptions))
		}
		fmt.Fprintln(tw)
	}
	placed := false
	for _, n := range p.ExistingNodes {
		if len(n.PodNames) == 0 {
			continue
		}
		if !placed {
			fmt.Fprintln(tw, "EXISTING NODE\tPODS PLACED")
			placed = true
		}
		onNodes += len(n.PodNames)
		fmt.Fprintf(tw, "%s\t%d\n", n.Name, len(n.PodNames))
	}
	if placed {
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(p.Unschedulable) > 0 {
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "UNSCHEDULABLE POD\tREASON")
		for _, u := range p.Unschedulable {
			fmt.Fprintf(tw, "%s\t%s\n", u.PodName, u.Reason)
		}
		fmt.Fprintln(tw)
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "claims: %d\n", len(p.NewClaims))
	fmt.Fprintf(w, "pods: %d pending; %d on existing nodes, %d on new claims, %d unschedulable\n", pending, onNodes, onClaims, len(p.Unschedulable))
	fmt.Fprintf(w, "cost: $%.4f/h, lower bound $%.4f/h, ratio %.3f\n", p.TotalPrice, p.LowerBound, p.CostRatio())
	_, err := fmt.Fprintf(w, "solve: %s (reading the input: %s)\n", times.solve.Round(10*time.Microsecond), times.read.Round(10*time.Microsecond))
	return err
}

// options shows the first few instance-type options and how many more there are.
func options(names []string) string {
	if len(names) <= tableOptions {
		return strings.Join(names, ",")
	}
	return fmt.Sprintf("%s (+%d)", strings.Join(names[:tableOptions], ","), len(names)-tableOptions)
}
