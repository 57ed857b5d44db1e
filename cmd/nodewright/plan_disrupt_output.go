package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nodewright/nodewright/shared/core/disruption"
)

// disruptReport is the -o json document of plan --disrupt, the contract of issue 13. Lists are never
// null; prices are dollars per hour rounded to a millionth.
type disruptReport struct {
	Commands []disruptCommand `json:"commands"`
	Kept     []disruptKept    `json:"kept"`
	// RejectedMoves are the moves the Balanced policy scored below its threshold in the last tick
	// (why the nodes of Balanced pools left are kept), each with its score.
	RejectedMoves     []disruption.ScoredMove `json:"rejectedMoves"`
	CostBeforePerHour float64                 `json:"costBeforePerHour"`
	CostAfterPerHour  float64                 `json:"costAfterPerHour"`
	SolveSeconds      float64                 `json:"solveSeconds"`
}

type disruptCommand struct {
	Tick           int                  `json:"tick"`
	Reason         string               `json:"reason"`
	Method         string               `json:"method"`
	Action         string               `json:"action"`
	Nodes          []string             `json:"nodes"`
	Replacements   []disruptReplacement `json:"replacements"`
	Moves          []disruption.Move    `json:"moves"`
	SavingsPerHour float64              `json:"savingsPerHour"`
	// Score is the Balanced policy's approval of the command, when it takes nodes of a Balanced pool.
	Score *disruption.Score `json:"score,omitempty"`
	Why   string            `json:"why"`
}

type disruptReplacement struct {
	Name                string   `json:"name"`
	NodePool            string   `json:"nodePool"`
	InstanceType        string   `json:"instanceType"`
	InstanceTypeOptions []string `json:"instanceTypeOptions"`
	Zone                string   `json:"zone"`
	CapacityType        string   `json:"capacityType"`
	PricePerHour        float64  `json:"pricePerHour"`
}

type disruptKept struct {
	Node   string `json:"node"`
	Reason string `json:"reason"`
}

// dollars rounds a price to a millionth of a dollar, below any catalog's precision.
func dollars(v float64) float64 { return math.Round(v*1e6) / 1e6 }

// newDisruptReport turns a sequence into the report: ours are the input's Nodewright nodes, which
// with the replacements are the nodes priced and listed as kept.
func newDisruptReport(in *disruption.Input, seq disruption.SequenceResult, ours map[string]bool, elapsed time.Duration) disruptReport {
	r := disruptReport{Commands: []disruptCommand{}, Kept: []disruptKept{}, RejectedMoves: []disruption.ScoredMove{}, SolveSeconds: elapsed.Seconds()}
	for _, n := range in.Nodes {
		if ours[n.Name()] {
			r.CostBeforePerHour += n.Price
		}
	}
	replacements := map[string]bool{}
	for _, c := range seq.Commands {
		dc := disruptCommand{
			Tick: c.Tick, Reason: string(c.Reason), Method: string(c.Method), Action: string(c.Action),
			Nodes: []string{}, Replacements: []disruptReplacement{}, Moves: []disruption.Move{}, Why: c.Why, Score: c.Score,
		}
		savings := 0.0
		for _, n := range c.Nodes {
			dc.Nodes = append(dc.Nodes, n.Name)
			savings += n.PricePerHour
		}
		for _, cp := range c.Replacements {
			replacements[cp.Name] = true
			savings -= cp.Price
			dc.Replacements = append(dc.Replacements, disruptReplacement{
				Name: cp.Name, NodePool: cp.NodePool, InstanceType: cp.InstanceType,
				InstanceTypeOptions: append([]string{}, cp.InstanceTypeOptions...), Zone: cp.Zone,
				CapacityType: cp.CapacityType, PricePerHour: dollars(cp.Price),
			})
		}
		dc.Moves = append(dc.Moves, c.Moves...)
		dc.SavingsPerHour = dollars(savings)
		r.Commands = append(r.Commands, dc)
	}
	for _, n := range seq.Nodes {
		if ours[n.Name()] || replacements[n.Name()] {
			r.CostAfterPerHour += n.Price
		}
	}
	for _, k := range seq.Kept {
		if ours[k.Node] || replacements[k.Node] {
			r.Kept = append(r.Kept, disruptKept{Node: k.Node, Reason: k.Reason})
		}
	}
	r.RejectedMoves = append(r.RejectedMoves, seq.Rejected...)
	r.CostBeforePerHour, r.CostAfterPerHour = dollars(r.CostBeforePerHour), dollars(r.CostAfterPerHour)
	return r
}

func writeDisruptJSON(w io.Writer, r disruptReport) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// writeDisruptTable prints the report for people: the commands tick by tick with why, the nodes
// kept with why, then the cost before and after.
func writeDisruptTable(w io.Writer, r disruptReport, ticks int) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if len(r.Commands) == 0 {
		fmt.Fprintln(tw, "No consolidation: no command is worth taking.")
	} else {
		fmt.Fprintln(tw, "TICK\tREASON\tMETHOD\tACTION\tNODES\tREPLACEMENT\tPODS MOVED\tSAVES $/H")
		for _, c := range r.Commands {
			repl := "-"
			switch len(c.Replacements) {
			case 0:
			case 1:
				p := c.Replacements[0]
				repl = fmt.Sprintf("%s: %s %s %s $%.4f/h (%d types)", p.Name, p.InstanceType, p.CapacityType, p.Zone, p.PricePerHour, len(p.InstanceTypeOptions))
			default:
				total := 0.0
				for _, p := range c.Replacements {
					total += p.PricePerHour
				}
				repl = fmt.Sprintf("%d nodes (%s, ...) $%.4f/h", len(c.Replacements), c.Replacements[0].Name, total)
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%d\t%.4f\n", c.Tick, c.Reason, c.Method, c.Action, nodeNames(c.Nodes), repl, len(c.Moves), c.SavingsPerHour)
		}
	}
	fmt.Fprintln(tw)
	if err := tw.Flush(); err != nil {
		return err
	}
	for i, c := range r.Commands {
		fmt.Fprintf(w, "%d. tick %d: %s\n", i+1, c.Tick, c.Why)
	}
	if len(r.Commands) > 0 {
		fmt.Fprintln(w)
	}
	if err := writeRejectedMoves(w, r.RejectedMoves); err != nil {
		return err
	}
	if len(r.Kept) > 0 {
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "KEPT NODE\tREASON")
		for _, k := range r.Kept {
			fmt.Fprintf(tw, "%s\t%s\n", k.Node, k.Reason)
		}
		fmt.Fprintln(tw)
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	saved := r.CostBeforePerHour - r.CostAfterPerHour
	pct := 0.0
	if r.CostBeforePerHour > 0 {
		pct = 100 * saved / r.CostBeforePerHour
	}
	fmt.Fprintf(w, "commands: %d over %d %s (the last decides nothing)\n", len(r.Commands), ticks, plural(ticks, "tick", "ticks"))
	fmt.Fprintf(w, "cost: $%.4f/h before, $%.4f/h after; saves $%.4f/h (%.1f%%)\n", r.CostBeforePerHour, r.CostAfterPerHour, saved, pct)
	_, err := fmt.Fprintf(w, "solve: %s\n", time.Duration(r.SolveSeconds*float64(time.Second)).Round(time.Millisecond))
	return err
}

// writeRejectedMoves lists the moves the Balanced policy rejected, with their scores.
func writeRejectedMoves(w io.Writer, moves []disruption.ScoredMove) error {
	if len(moves) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "REJECTED MOVE (BALANCED)\tMETHOD\tACTION\tSAVES $/H\tSCORE\tTHRESHOLD\tWHY")
	for _, m := range moves {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.4f\t%.2f\t%.2f\t%s\n", nodeNames(m.Nodes), m.Method, m.Action, m.SavingsPerHour, m.Score.Score,
			m.Score.Threshold, m.Score.Describe())
	}
	fmt.Fprintln(tw)
	return tw.Flush()
}

// nodeNames shows the first few node names and how many more there are.
func nodeNames(names []string) string {
	const shown = 4
	if len(names) <= shown {
		return strings.Join(names, ",")
	}
	return fmt.Sprintf("%s (+%d)", strings.Join(names[:shown], ","), len(names)-shown)
}
