package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

func init() {
	register("status", command{summary: "show the NodeClaims of a deployed Nodewright, per NodePool, the static pools' replicas and current nodes, the offerings out of capacity, the observed memory and the settings", run: runStatus})
}

// statusNow is the clock status reads ages against; tests replace it.
var statusNow = time.Now

// statusReport is the -o json document.
type statusReport struct {
	NodePools   []poolStatus                `json:"nodePools"`
	NodeClaims  []claimStatus               `json:"nodeClaims"`
	Unavailable []state.UnavailableOffering `json:"unavailableOfferings"`
	// UnavailableSubnets are the subnets recently found without a free address (passed over by launches).
	UnavailableSubnets []state.UnavailableSubnet `json:"unavailableSubnets"`
	// Memory is the memory capacity registered Nodes reported per instance type and AMI.
	Memory   []memoryStatus `json:"observedMemory"`
	Settings statusSettings `json:"settings"`
	// Currency is the currency of the prices (pricing.Currency of the region): CNY in China, else USD.
	Currency string `json:"currency"`
	// StaticPools are the static NodePools (spec.replicas): replicas desired, nodes current.
	StaticPools []staticPoolStatus `json:"staticNodePools"`
}

// poolStatus sums one NodePool's claims.
type poolStatus struct {
	Name         string         `json:"name"`
	Claims       int            `json:"nodeClaims"`
	ByLifecycle  map[string]int `json:"byLifecycle"`
	PricePerHour float64        `json:"pricePerHour"`
	// Drifted, Expired and ExpiringSoon count the claims with a Drifted condition, past their expiry, and
	// expiring within the next 24 hours; DisruptionRequested those in service with a request pending.
	Drifted             int `json:"drifted"`
	Expired             int `json:"expired"`
	ExpiringSoon        int `json:"expiringWithin24h"`
	DisruptionRequested int `json:"disruptionRequested"`
}

// claimStatus is one claim as status shows it: the record and when it expires.
type claimStatus struct {
	state.Claim
	claimExpiry
}

// requestPending reports whether the claim has a disruption request the disruption run has yet to act on.
func requestPending(c state.Claim) bool { return c.DisruptionRequest != nil && c.Lifecycle.InService() }

// runStatus reads the state table, what `kubectl get nodeclaims` shows in a Karpenter cluster: every
// NodeClaim that is not deleted (with --all, also those deleted within the retention), its lifecycle,
// instance, price, Node, why it is on its way out (or REQUESTED when `nodewright disrupt` asked for it),
// its Drifted condition's reason and when it expires; the NodePools' totals, with how many claims drifted,
// expired or expire within 24 hours; each static NodePool's replicas desired and nodes current; the
// offerings marked out of capacity and for how much longer; the memory registered Nodes reported per
// instance type and AMI beside the estimate it replaces; the settings the functions work with (Karpenter's, as the CDK app stored them, or the defaults).
func runStatus(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("nodewright status", flag.ContinueOnError)
	fset.SetOutput(stderr)
	tf := addTableFlags(fset)
	all := fset.Bool("all", false, "also list NodeClaims deleted within the retention period")
	output := fset.String("o", "table", "output `FORMAT`: table or json")
	fset.Usage = func() {
		fmt.Fprintln(stderr, "Usage: nodewright status --table NAME [--region REGION] [--all] [-o table|json]")
		fset.PrintDefaults()
	}
	if err := fset.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *tf.table == "" || fset.NArg() > 0 || (*output != "table" && *output != "json") {
		fset.Usage()
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	store, err := tf.open(ctx)
	if err == nil {
		var rep statusReport
		if rep, err = readStatus(ctx, store, *all, statusNow()); err == nil {
			rep.Currency = tf.currency()
			return printStatus(stdout, stderr, rep, *output)
		}
	}
	fmt.Fprintln(stderr, "nodewright status:", err)
	return 1
}

// printStatus writes the report in the asked format.
func printStatus(stdout, stderr io.Writer, rep statusReport, output string) int {
	if output == "json" {
		if err := writeJSON(stdout, rep); err != nil {
			fmt.Fprintln(stderr, "nodewright status:", err)
			return 1
		}
		return 0
	}
	writeStatus(stdout, rep, statusNow())
	return 0
}

func readStatus(ctx context.Context, store *state.Store, all bool, now time.Time) (statusReport, error) {
	list := store.ListClaims // deleted claims are read only when asked for
	if all {
		list = store.ListAllClaims
	}
	claims, err := list(ctx)
	if err != nil {
		return statusReport{}, err
	}
	unavailable, err := store.UnavailableOfferings(ctx)
	if err != nil {
		return statusReport{}, err
	}
	subnets, err := store.UnavailableSubnets(ctx)
	if err != nil {
		return statusReport{}, err
	}
	stored, err := readSettings(ctx, store)
	if err != nil {
		return statusReport{}, err
	}
	memory, err := readMemory(ctx, store, stored.Settings.VMMemoryOverheadPercent)
	if err != nil {
		return statusReport{}, err
	}
	static, err := readStaticPools(ctx, store, claims)
	if err != nil {
		return statusReport{}, err
	}
	rep := statusReport{NodeClaims: []claimStatus{}, Unavailable: unavailable, NodePools: []poolStatus{}, Memory: memory, Settings: stored,
		StaticPools: static}
	rep.UnavailableSubnets = subnets
	if rep.UnavailableSubnets == nil {
		rep.UnavailableSubnets = []state.UnavailableSubnet{}
	}
	if rep.Unavailable == nil {
		rep.Unavailable = []state.UnavailableOffering{}
	}
	pools := map[string]*poolStatus{}
	for _, c := range claims {
		if c.Lifecycle == state.Deleted && !all {
			continue
		}
		exp := expiryOf(c, now)
		rep.NodeClaims = append(rep.NodeClaims, claimStatus{c, exp})
		if c.Lifecycle == state.Deleted {
			continue
		}
		p := pools[c.NodePool]
		if p == nil {
			p = &poolStatus{Name: c.NodePool, ByLifecycle: map[string]int{}}
			pools[c.NodePool] = p
		}
		p.Claims++
		p.ByLifecycle[string(c.Lifecycle)]++
		p.PricePerHour += c.PricePerHour
		if c.Drifted != nil {
			p.Drifted++
		}
		if exp.Expired {
			p.Expired++
		} else if exp.within(expiringSoon, now) {
			p.ExpiringSoon++
		}
		if requestPending(c) {
			p.DisruptionRequested++
		}
	}
	sort.Slice(rep.NodeClaims, func(i, j int) bool {
		a, b := rep.NodeClaims[i], rep.NodeClaims[j]
		return a.NodePool < b.NodePool || a.NodePool == b.NodePool && a.Name < b.Name
	})
	for _, p := range pools {
		rep.NodePools = append(rep.NodePools, *p)
	}
	sort.Slice(rep.NodePools, func(i, j int) bool { return rep.NodePools[i].Name < rep.NodePools[j].Name })
	return rep, nil
}

func writeStatus(w io.Writer, rep statusReport, now time.Time) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NODEPOOL\tNODECLAIMS\tLIFECYCLES\t"+perHourHeader(rep.Currency)+"\tDRIFTED\tEXPIRED\tEXPIRING<24H\tREQUESTED")
	for _, p := range rep.NodePools {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%.4f\t%d\t%d\t%d\t%d\n", p.Name, p.Claims, lifecycles(p.ByLifecycle), p.PricePerHour,
			p.Drifted, p.Expired, p.ExpiringSoon, p.DisruptionRequested)
	}
	tw.Flush()
	writeStaticPools(w, rep.StaticPools)
	fmt.Fprintln(w)
	if len(rep.NodeClaims) == 0 {
		fmt.Fprintln(w, "No NodeClaims.")
	} else {
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tNODEPOOL\tLIFECYCLE\tTYPE\tZONE\tCAPACITY\t"+perHourHeader(rep.Currency)+"\tNODE\tAGE\tDISRUPTION\tDRIFTED\tEXPIRES")
		for _, c := range rep.NodeClaims {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%.4f\t%s\t%s\t%s\t%s\t%s\n", c.Name, c.NodePool, c.Lifecycle, orDash(c.InstanceType),
				orDash(c.Zone), orDash(c.CapacityType), c.PricePerHour, orDash(c.NodeName), age(now.Sub(c.CreatedAt)), disruptionColumn(c.Claim),
				driftColumn(c.Drifted), c.short(now))
		}
		tw.Flush()
	}
	if len(rep.Unavailable) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "UNAVAILABLE OFFERING\tREASON\tRETRIED IN")
		for _, u := range rep.Unavailable {
			what := fmt.Sprintf("%s %s %s", u.InstanceType, u.Zone, u.CapacityType)
			if u.ReservationID != "" {
				what += " " + u.ReservationID // one capacity reservation, reclaimed by its owner
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", what, u.Reason, age(u.Until().Sub(now)))
		}
		tw.Flush()
	}
	if len(rep.UnavailableSubnets) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "FULL SUBNET\tZONE\tREASON\tRETRIED IN")
		for _, u := range rep.UnavailableSubnets {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", u.SubnetID, u.Zone, u.Reason, age(u.Until().Sub(now)))
		}
		tw.Flush()
	}
	fmt.Fprintln(w)
	writeMemory(w, rep.Memory, now)
	writeSettings(w, rep.Settings)
}

// disruptionColumn is why the claim is on its way out, REQUESTED when an operator's request is pending, or "-".
func disruptionColumn(c state.Claim) string {
	if c.DisruptionReason == "" && requestPending(c) {
		return "REQUESTED"
	}
	return orDash(c.DisruptionReason)
}

func driftColumn(d *state.DriftCondition) string {
	if d == nil {
		return "-"
	}
	return orDash(d.Reason)
}

// lifecycles prints counts by lifecycle in lifecycle order.
func lifecycles(by map[string]int) string {
	order := []state.Lifecycle{state.Pending, state.Launched, state.Registered, state.Initialized, state.Draining, state.Terminating}
	var parts []string
	for _, l := range order {
		if n := by[string(l)]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, l))
		}
	}
	return strings.Join(parts, ", ")
}

// age prints a duration as kubectl does: the largest unit or two.
func age(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < 2*time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < 2*time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}
