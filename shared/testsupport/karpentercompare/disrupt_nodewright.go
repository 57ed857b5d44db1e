package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// buildNodewright builds ./cmd/nodewright of the main module at repo into dir and returns the binary.
func buildNodewright(repo, dir string) (string, error) {
	bin := filepath.Join(dir, "nodewright")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/nodewright")
	cmd.Dir = repo
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building nodewright in %s: %w\n%s", repo, err, out)
	}
	return bin, nil
}

// nodewrightOutcome is one run of `nodewright plan --disrupt -o json`.
type nodewrightOutcome struct {
	CostBefore, CostAfter float64
	Commands              int
	Solve, Total          time.Duration
}

// disruptReport is the part of plan --disrupt's JSON the comparison reads.
type disruptReport struct {
	Commands          []json.RawMessage `json:"commands"`
	CostBeforePerHour float64           `json:"costBeforePerHour"`
	CostAfterPerHour  float64           `json:"costAfterPerHour"`
	SolveSeconds      float64           `json:"solveSeconds"`
}

// planArgs are plan's file flags for the case.
func planArgs(f disruptFiles, pods string) []string {
	args := []string{"--pods", pods, "--nodepools", f.NodePools, "--instance-types", f.Catalog}
	if f.DaemonSets != "" {
		args = append(args, "--daemonsets", f.DaemonSets)
	}
	return args
}

// runNodewrightDisruption runs the dry run on the case's files.
func runNodewrightDisruption(bin string, in *disruptCase, opts disruptOptions) (nodewrightOutcome, error) {
	args := append([]string{"plan", "--disrupt", "--nodes", in.Files.Nodes}, planArgs(in.Files, in.Files.Pods)...)
	if in.Files.PDBs != "" {
		args = append(args, "--pdbs", in.Files.PDBs)
	}
	if opts.SpotToSpot {
		args = append(args, "--spot-to-spot")
	}
	args = append(args, "-o", "json")
	start := time.Now()
	out, err := runBinary(bin, args)
	total := time.Since(start)
	if err != nil {
		return nodewrightOutcome{}, err
	}
	var r disruptReport
	if err := json.Unmarshal(out, &r); err != nil {
		return nodewrightOutcome{}, fmt.Errorf("nodewright plan --disrupt output: %w", err)
	}
	return nodewrightOutcome{
		CostBefore: r.CostBeforePerHour, CostAfter: r.CostAfterPerHour, Commands: len(r.Commands),
		Solve: time.Duration(r.SolveSeconds * float64(time.Second)), Total: total,
	}, nil
}

// lowerBound is the LP lower bound of the NodePool nodes' pods (not DaemonSet pods): the plan of
// those pods, all pending, on an empty cluster with the same NodePools, catalog and DaemonSets, as
// cmd/nodewright's disruption benchmark computes it.
func lowerBound(bin string, in *disruptCase, dir string) (float64, error) {
	ours := map[string]bool{}
	for _, n := range in.Nodes {
		if in.ours(n) {
			ours[n.Name] = true
		}
	}
	list := corev1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"}}
	for _, p := range in.Pods {
		if !ours[p.Spec.NodeName] || ownedByDaemonSet(p) || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		q := p.DeepCopy()
		q.Spec.NodeName = ""
		q.Status = corev1.PodStatus{Phase: corev1.PodPending}
		list.Items = append(list.Items, *q)
	}
	data, err := json.Marshal(list)
	if err != nil {
		return 0, err
	}
	path := filepath.Join(dir, "pending-"+filepath.Base(in.Name)+".json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return 0, err
	}
	out, err := runBinary(bin, append(append([]string{"plan"}, planArgs(in.Files, path)...), "-o", "json"))
	if err != nil {
		return 0, err
	}
	var plan struct {
		LowerBound float64 `json:"lowerBoundPerHour"`
	}
	if err := json.Unmarshal(out, &plan); err != nil {
		return 0, fmt.Errorf("nodewright plan output: %w", err)
	}
	return plan.LowerBound, nil
}

func runBinary(bin string, args []string) ([]byte, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s %v: %w\n%s", bin, args, err, stderr.String())
	}
	return stdout.Bytes(), nil
}
