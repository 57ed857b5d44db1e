package main

import (
	"fmt"
	"io"
	"time"
)

// printDisruptTable writes the disruption comparison as a Markdown table: per case the medians of
// the runs, and Karpenter's cost-after range.
func printDisruptTable(w io.Writer, rows []disruptRow, runs int, opts disruptOptions) {
	rules := "Karpenter's default rules (spot-to-spot consolidation off)"
	if opts.SpotToSpot {
		rules = "spot-to-spot consolidation on"
	}
	fmt.Fprintf(w, "Disruption to a fixed point, %s. Medians of %d runs; cost is $/hour of the NodePool nodes.\n\n", rules, runs)
	fmt.Fprintln(w, "| input | nodes | pods | cost before | NW cost after | NW commands | NW solve | K cost after (range) | K commands | K decision | K total | NW/K | LP bound | NW/LB | K/LB |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		n := medianOf(r.Ours, func(o nodewrightOutcome) float64 { return o.CostAfter })
		solves := make([]time.Duration, len(r.Ours))
		for i, o := range r.Ours {
			solves[i] = o.Solve
		}
		k := medianOf(r.Karpenter, func(o karpenterOutcome) float64 { return o.CostAfter })
		kMin, kMax := k.CostAfter, k.CostAfter
		decisions, totals := make([]time.Duration, len(r.Karpenter)), make([]time.Duration, len(r.Karpenter))
		still := 0
		for i, o := range r.Karpenter {
			kMin, kMax = min(kMin, o.CostAfter), max(kMax, o.CostAfter)
			decisions[i], totals[i] = o.Decision, o.Total
			if o.StillDeciding {
				still++
			}
		}
		kCost := fmt.Sprintf("%.4f", k.CostAfter)
		if kMax-kMin > 1e-9 {
			kCost += fmt.Sprintf(" (%.4f–%.4f)", kMin, kMax)
		}
		if still > 0 {
			kCost += fmt.Sprintf(", still deciding in %d/%d", still, len(r.Karpenter))
		}
		lb, nlb, klb := "-", "-", "-"
		if r.LowerBoundOK {
			lb, nlb, klb = fmt.Sprintf("%.4f", r.LowerBound), ratioText(n.CostAfter, r.LowerBound), ratioText(k.CostAfter, r.LowerBound)
		}
		fmt.Fprintf(w, "| %s | %d | %d | %.4f | %.4f | %d | %s | %s | %d | %s | %s | %s | %s | %s | %s |\n",
			r.Name, r.Nodes, r.Pods, r.CostBefore, n.CostAfter, n.Commands, medianDuration(solves).Round(msRound),
			kCost, k.Commands, medianDuration(decisions).Round(msRound), medianDuration(totals).Round(msRound),
			ratioText(n.CostAfter, k.CostAfter), lb, nlb, klb)
	}
}
