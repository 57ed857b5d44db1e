package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

func init() {
	register("explain", command{summary: "show the decision records of a pod, NodeClaim or Node: why it was (not) launched, disrupted or removed", run: runExplain})
}

// subjectKinds are the kinds of object decision records are kept for, with the form of their names.
var subjectKinds = map[string]string{"pod": "pod/NAMESPACE/NAME", "nodeclaim": "nodeclaim/NAME", "node": "node/NAME", "instance": "instance/ID"}

// explainNow is the clock explain reads expiry against; tests replace it.
var explainNow = time.Now

// runExplain reads the decision records every function writes for a subject, newest first, and (for a
// NodeClaim, or a Node through its claim) the claim record itself: what Nodewright decided about it and
// why, for 14 days, and where the claim stands (its Drifted condition, expiry, pending disruption request).
func runExplain(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("nodewright explain", flag.ContinueOnError)
	fset.SetOutput(stderr)
	tf := addTableFlags(fset)
	limit := fset.Int("limit", 20, "show at most `N` records per subject, newest first")
	output := fset.String("o", "table", "output `FORMAT`: table or json")
	fset.Usage = func() {
		fmt.Fprintln(stderr, "Usage: nodewright explain SUBJECT [SUBJECT ...] --table NAME [--region REGION] [--limit N] [-o table|json]")
		fmt.Fprintln(stderr, "SUBJECT is pod/NAMESPACE/NAME, nodeclaim/NAME, node/NAME or instance/ID.")
		fset.PrintDefaults()
	}
	subjects, err := parseInterleaved(fset, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if len(subjects) == 0 || *tf.table == "" || *limit < 1 || (*output != "table" && *output != "json") {
		fset.Usage()
		return 2
	}
	for _, s := range subjects {
		if err := checkSubject(s); err != nil {
			fmt.Fprintln(stderr, "nodewright explain:", err)
			return 2
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	store, err := tf.open(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "nodewright explain:", err)
		return 1
	}
	var found []explained
	for _, s := range subjects {
		e, err := explain(ctx, store, s, *limit, explainNow())
		if err != nil {
			fmt.Fprintln(stderr, "nodewright explain:", err)
			return 1
		}
		if e.Claim != nil {
			e.Currency = tf.currency()
		}
		found = append(found, e)
	}
	if *output == "json" {
		if err := writeJSON(stdout, found); err != nil {
			fmt.Fprintln(stderr, "nodewright explain:", err)
			return 1
		}
		return 0
	}
	writeExplained(stdout, found, explainNow())
	return 0
}

// parseInterleaved parses flags wherever they stand among the arguments and returns the others, so
// `explain pod/ns/web --table T` works as well as `explain --table T pod/ns/web`.
func parseInterleaved(fset *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fset.Parse(args); err != nil {
			return nil, err
		}
		args = fset.Args()
		if len(args) == 0 {
			return positional, nil
		}
		positional, args = append(positional, args[0]), args[1:]
	}
}

// explained is what is known of one subject.
type explained struct {
	Subject string       `json:"subject"`
	Claim   *state.Claim `json:"claim,omitempty"`
	// Expiry is when the claim expires; set with Claim.
	Expiry    *claimExpiry     `json:"expiry,omitempty"`
	Decisions []state.Decision `json:"decisions"`
	// Currency is the currency of the claim's price (pricing.Currency of the region); set with Claim.
	Currency string `json:"currency,omitempty"`
	// Unschedulable are the provisioner's latest summaries of the pods it cannot provision, for a pod with
	// no CannotProvision record of its own: past a per-run cap a pod is only counted there.
	Unschedulable []state.Decision `json:"unschedulable,omitempty"`
}

// summaryLimit is how many of the provisioner's latest summaries explain shows for a pod.
const summaryLimit = 5

// checkSubject names what is wrong with a subject argument.
func checkSubject(s string) error {
	kind, name, ok := strings.Cut(s, "/")
	form, known := subjectKinds[kind]
	switch {
	case !ok || !known:
		return fmt.Errorf("subject %q: want pod/NAMESPACE/NAME, nodeclaim/NAME, node/NAME or instance/ID", s)
	case name == "" || strings.HasSuffix(name, "/") || (kind == "pod") != strings.Contains(name, "/"):
		return fmt.Errorf("subject %q: a %s subject is %s", s, kind, form)
	}
	return nil
}

func explain(ctx context.Context, store *state.Store, subject string, limit int, now time.Time) (explained, error) {
	e := explained{Subject: subject}
	if name, ok := strings.CutPrefix(subject, "nodeclaim/"); ok {
		c, err := store.GetClaim(ctx, name)
		switch {
		case err == nil:
			e.Claim = &c
		case !state.IsNotFound(err):
			return e, err
		}
	}
	if node, ok := strings.CutPrefix(subject, "node/"); ok {
		claims, err := claimsOfNode(ctx, store, node)
		if err != nil {
			return e, err
		}
		if len(claims) > 0 {
			e.Claim = &claims[0] // the live claim, else the newest deleted one
		}
	}
	if e.Claim != nil {
		exp := expiryOf(*e.Claim, now)
		e.Expiry = &exp
	}
	ds, err := store.Decisions(ctx, subject, limit)
	if err != nil {
		return e, err
	}
	e.Decisions = ds
	if e.Decisions == nil {
		e.Decisions = []state.Decision{}
	}
	if strings.HasPrefix(subject, "pod/") && !slices.ContainsFunc(ds, func(d state.Decision) bool { return d.Kind == "CannotProvision" }) {
		if e.Unschedulable, err = store.Decisions(ctx, state.UnschedulableSubject, summaryLimit); err != nil {
			return e, err
		}
	}
	return e, nil
}

// writeExplained prints each subject: the claim's state when there is one, then its decisions.
func writeExplained(w io.Writer, all []explained, now time.Time) {
	for i, e := range all {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w, e.Subject)
		if c := e.Claim; c != nil {
			if !strings.HasPrefix(e.Subject, "nodeclaim/") {
				fmt.Fprintln(w, "  nodeclaim", c.Name)
			}
			fmt.Fprintf(w, "  lifecycle %s  nodepool %s  instance %s %s %s %s  %s  node %s\n", c.Lifecycle, c.NodePool,
				orDash(c.InstanceID), orDash(c.InstanceType), orDash(c.Zone), orDash(c.CapacityType), perHour(e.Currency, c.PricePerHour), orDash(c.NodeName))
			if c.DisruptionReason != "" {
				line := "  disrupted: " + c.DisruptionReason
				if c.GoneBy != nil {
					line += ", instance gone by " + c.GoneBy.UTC().Format(time.RFC3339)
				}
				fmt.Fprintln(w, line)
			}
			writeClaimDisruption(w, *c, *e.Expiry, now)
		}
		if len(e.Decisions) == 0 {
			fmt.Fprintln(w, "  no decision recorded in the last 14 days")
		} else {
			writeDecisions(w, e.Decisions)
		}
		if len(e.Unschedulable) > 0 {
			fmt.Fprintln(w, "  the provisioner's latest summaries of pods it cannot provision (a pod past its per-run cap is only counted here):")
			writeDecisions(w, e.Unschedulable)
		}
	}
}

// writeDecisions prints decisions as a table, newest first as given.
func writeDecisions(w io.Writer, ds []state.Decision) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  TIME\tKIND\tREASON\tMESSAGE")
	for _, d := range ds {
		msg := d.Message
		if details := detailText(d.Details); details != "" {
			msg += " (" + details + ")"
		}
		if d.Truncated {
			msg += " [truncated]"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", d.At.UTC().Format(time.RFC3339), d.Kind, d.Reason, msg)
	}
	tw.Flush()
}

func detailText(details map[string]string) string {
	parts := make([]string, 0, len(details))
	for _, k := range slices.Sorted(maps.Keys(details)) {
		parts = append(parts, k+"="+details[k])
	}
	return strings.Join(parts, " ")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
