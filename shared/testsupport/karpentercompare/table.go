package main

import (
	"fmt"
	"io"
	"time"
)

const msRound = time.Millisecond

// printTable writes the comparison as a Markdown table, then one line per input where Nodewright
// costs more than Karpenter or a solver's cost varied between runs.
func printTable(w io.Writer, rows []row, runs int) {
	fmt.Fprintf(w, "Medians of %d runs. Cost is $/hour of launching every new NodeClaim at its launch offering.\n\n", runs)
	fmt.Fprintln(w, "| input | pods | Karpenter claims | Karpenter $/h | Karpenter setup | Karpenter solve | Nodewright claims | Nodewright $/h | Nodewright solve | cost ratio NW/K | LP lower bound $/h | K/LB | NW/LB |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		k, n := r.Karpenter, r.Ours
		fmt.Fprintf(w, "| %s | %d | %d | %.4f | %s | %s | %d | %.4f | %s | %.4f | %.4f | %s | %s |\n",
			r.Input, r.Pods, k.Claims, k.Cost, k.Setup.Round(msRound), k.Solve.Round(msRound),
			n.Claims, n.Cost, n.Solve.Round(msRound), ratio(n.Cost, k.Cost), n.LowerBound,
			ratioText(k.Cost, n.LowerBound), ratioText(n.Cost, n.LowerBound))
	}
	fmt.Fprintln(w)
	for _, r := range rows {
		k, n := r.Karpenter, r.Ours
		if n.CostMax > k.CostMin+1e-9 {
			fmt.Fprintf(w, "NODEWRIGHT MORE EXPENSIVE: %s %d pods: $%.4f/h vs Karpenter $%.4f/h (+$%.4f/h, +%.2f%%)\n",
				r.Input, r.Pods, n.CostMax, k.CostMin, n.CostMax-k.CostMin, 100*(n.CostMax/k.CostMin-1))
		}
		for _, s := range []struct {
			name string
			sum  summary
		}{{"Karpenter", k}, {"Nodewright", n}} {
			if s.sum.CostMax-s.sum.CostMin > 1e-9 {
				fmt.Fprintf(w, "%s cost varied between runs on %s %d pods: $%.4f–$%.4f/h\n", s.name, r.Input, r.Pods, s.sum.CostMin, s.sum.CostMax)
			}
		}
	}
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func ratioText(a, b float64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.4f", a/b)
}
