package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/user"
	"strings"
	"time"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

func init() {
	register("disrupt", command{summary: "ask for a NodeClaim or Node to be replaced and drained (like kubectl delete nodeclaim)", run: runDisrupt})
}

// disruptNow and disruptBy are the clock and the caller identity a request records; tests replace them.
var (
	disruptNow = time.Now
	disruptBy  = callerName
)

// What a disrupt did, in its -o json document.
const (
	disruptRequested        = "Requested"
	disruptAlreadyRequested = "AlreadyRequested"
	disruptAlreadyRemoving  = "AlreadyBeingRemoved"
)

// disruptResult is the -o json document.
type disruptResult struct {
	NodeClaim string          `json:"nodeClaim"`
	Node      string          `json:"node,omitempty"`
	Lifecycle state.Lifecycle `json:"lifecycle"`
	// Outcome is disruptRequested (the request was written), disruptAlreadyRequested (an earlier request
	// stands; nothing written) or disruptAlreadyRemoving (the claim is draining or terminating; nothing written).
	Outcome           string                   `json:"outcome"`
	DisruptionRequest *state.DisruptionRequest `json:"disruptionRequest,omitempty"`
	DisruptionReason  string                   `json:"disruptionReason,omitempty"`
	// TerminationGracePeriod bounds the drain ("" when the claim records none).
	TerminationGracePeriod string `json:"terminationGracePeriod,omitempty"`

	since *time.Time // when the claim started draining or terminating, for the table output
}

// Sentinels that abandon the claim update without writing.
var (
	errDisruptAlreadyRequested = errors.New("already requested")
	errDisruptAlreadyRemoving  = errors.New("already being removed")
	errDisruptDeleted          = errors.New("deleted")
)

// runDisrupt records an operator's request to disrupt one NodeClaim, the equivalent of `kubectl delete
// nodeclaim`: the disruption function acts on it on its next run.
func runDisrupt(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("nodewright disrupt", flag.ContinueOnError)
	fset.SetOutput(stderr)
	tf := addTableFlags(fset)
	reason := fset.String("reason", "", "why, as free `TEXT` recorded with the request (explain shows it)")
	output := fset.String("o", "table", "output `FORMAT`: table or json")
	fset.Usage = func() {
		fmt.Fprintln(stderr, "Usage: nodewright disrupt nodeclaim/NAME|node/NAME --table NAME [--region REGION] [--reason TEXT] [-o table|json]")
		fmt.Fprintln(stderr, "Launches replacement capacity for the node's pods, then drains it gracefully; NodePool budgets and")
		fmt.Fprintln(stderr, "karpenter.sh/do-not-disrupt do not hold the request back.")
		fset.PrintDefaults()
	}
	targets, err := parseInterleaved(fset, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	kind, name, err := disruptTarget(targets)
	if err == nil && *tf.table == "" {
		err = errors.New("the state table is required: --table NAME or NODEWRIGHT_STATE_TABLE")
	}
	if err == nil && *output != "table" && *output != "json" {
		err = fmt.Errorf("output format %q: want table or json", *output)
	}
	if err != nil {
		fmt.Fprintln(stderr, "nodewright disrupt:", err)
		fset.Usage()
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	store, err := tf.open(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "nodewright disrupt:", err)
		return 1
	}
	res, err := disrupt(ctx, store, kind, name, *reason)
	if err != nil {
		fmt.Fprintln(stderr, "nodewright disrupt:", err)
		return 1
	}
	if *output == "json" {
		if err := writeJSON(stdout, res); err != nil {
			fmt.Fprintln(stderr, "nodewright disrupt:", err)
			return 1
		}
		return 0
	}
	writeDisrupted(stdout, res)
	return 0
}

// disruptTarget checks the positional arguments: exactly one nodeclaim/NAME or node/NAME.
func disruptTarget(args []string) (kind, name string, err error) {
	switch len(args) {
	case 0:
		return "", "", errors.New("name the NodeClaim or Node to disrupt: nodeclaim/NAME or node/NAME")
	case 1:
	default:
		return "", "", fmt.Errorf("one NodeClaim or Node at a time, got %d: %s", len(args), strings.Join(args, " "))
	}
	kind, name, ok := strings.Cut(args[0], "/")
	switch {
	case !ok || (kind != "nodeclaim" && kind != "node"):
		return "", "", fmt.Errorf("%q: want nodeclaim/NAME or node/NAME", args[0])
	case name == "" || strings.Contains(name, "/"):
		return "", "", fmt.Errorf("%q: a %s is named %s/NAME", args[0], kind, kind)
	}
	return kind, name, nil
}

// disrupt resolves the target to its claim and writes the request, unless the claim is already on its way
// out or already has one. The checks run inside the optimistic-locked update, so they hold for what is written.
func disrupt(ctx context.Context, store *state.Store, kind, name, reason string) (disruptResult, error) {
	claimName := name
	if kind == "node" {
		c, err := liveClaimOfNode(ctx, store, name)
		if err != nil {
			return disruptResult{}, err
		}
		claimName = c.Name
	}
	req := state.DisruptionRequest{Reason: reason, RequestedAt: disruptNow().UTC(), By: disruptBy()}
	var seen state.Claim
	written, err := store.UpdateClaim(ctx, claimName, func(c *state.Claim) error {
		seen = *c
		switch {
		case c.Lifecycle == state.Deleted:
			return errDisruptDeleted
		case !c.Lifecycle.InService():
			return errDisruptAlreadyRemoving
		case c.DisruptionRequest != nil:
			return errDisruptAlreadyRequested
		}
		c.DisruptionRequest = &req
		return nil
	})
	res := disruptResult{NodeClaim: claimName, Node: seen.NodeName, Lifecycle: seen.Lifecycle,
		DisruptionRequest: seen.DisruptionRequest, DisruptionReason: seen.DisruptionReason}
	if g := seen.TerminationGracePeriod; g != nil {
		res.TerminationGracePeriod = g.String()
	}
	switch {
	case err == nil:
		res.Outcome, res.DisruptionRequest = disruptRequested, written.DisruptionRequest
	case errors.Is(err, errDisruptAlreadyRequested):
		res.Outcome = disruptAlreadyRequested
	case errors.Is(err, errDisruptAlreadyRemoving):
		res.Outcome, res.since = disruptAlreadyRemoving, seen.DrainingAt
		if res.since == nil || seen.Lifecycle == state.Terminating {
			res.since = seen.TerminatingAt
		}
	case errors.Is(err, errDisruptDeleted):
		return res, fmt.Errorf("nodeclaim %s was deleted%s: there is nothing left to disrupt", claimName, atTime(" at ", seen.DeletedAt))
	case state.IsNotFound(err):
		return res, fmt.Errorf("nodeclaim %s: no such NodeClaim in the state table (not launched by this Nodewright, "+
			"or deleted more than %s ago)", claimName, age(state.DeletedClaimRetention))
	default:
		return res, err
	}
	return res, nil
}

// writeDisrupted says what was done and what happens next.
func writeDisrupted(w io.Writer, r disruptResult) {
	subject := "nodeclaim/" + r.NodeClaim
	follow := subject
	if r.Node != "" {
		subject += " (node " + r.Node + ")"
		follow = "node/" + r.Node
	}
	switch r.Outcome {
	case disruptAlreadyRemoving:
		what := string(r.Lifecycle) + atTime(" since ", r.since)
		if r.DisruptionReason != "" {
			what += ", " + r.DisruptionReason
		}
		fmt.Fprintf(w, "%s is already being removed (%s); nothing written.\n", subject, what)
		fmt.Fprintf(w, "Follow it with: nodewright explain %s\n", follow)
		return
	case disruptAlreadyRequested:
		fmt.Fprintf(w, "%s: disruption already requested %s; nothing written, the first request stands.\n", subject, requestText(r.DisruptionRequest))
	default:
		fmt.Fprintf(w, "%s: disruption requested %s.\n", subject, requestText(r.DisruptionRequest))
	}
	if r.Node == "" {
		fmt.Fprintf(w, "Its node is not registered yet (lifecycle %s); the request stands all the same.\n", r.Lifecycle)
	}
	fmt.Fprintln(w, "Next, on the disruption function's next run (every minute):")
	fmt.Fprintln(w, "  1. it launches replacement capacity for the node's pods;")
	if r.TerminationGracePeriod != "" {
		fmt.Fprintf(w, "  2. then drains the node gracefully, within its terminationGracePeriod (%s).\n", r.TerminationGracePeriod)
	} else {
		fmt.Fprintln(w, "  2. then drains the node gracefully (the NodeClaim records no terminationGracePeriod to bound the drain).")
	}
	fmt.Fprintln(w, "NodePool disruption budgets and karpenter.sh/do-not-disrupt do not hold the request back.")
	fmt.Fprintf(w, "Follow it with: nodewright explain %s\n", follow)
}

// requestText is "at TIME by WHO: REASON", leaving out what is not known.
func requestText(r *state.DisruptionRequest) string {
	if r == nil {
		return ""
	}
	s := "at " + r.RequestedAt.UTC().Format(time.RFC3339)
	if r.By != "" {
		s += " by " + r.By
	}
	if r.Reason != "" {
		s += ": " + r.Reason
	}
	return s
}

func atTime(prefix string, t *time.Time) string {
	if t == nil {
		return ""
	}
	return prefix + t.UTC().Format(time.RFC3339)
}

// callerName is who runs the command, as far as the environment says offline: $USER, else the OS account.
func callerName() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return ""
}
