package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
	"github.com/nodewright/nodewright/shared/flows/provisioning"
)

// mixSeed is the seed of the in-process benchmarks (shared/core/scheduling/solver_bench_test.go).
const mixSeed = 42

// mixNodePools is one NodePool whose only requirement (Linux, which the API requires one of) every
// synthetic type meets, like the in-process benchmark's schedulingtest.NodePool("default"), and the
// EC2NodeClass it names.
const mixNodePools = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      requirements:
        - {key: kubernetes.io/os, operator: In, values: [linux]}
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  role: KarpenterNodeRole-demo
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  amiSelectorTerms: [{alias: al2023@latest}]
`

// writeMixInputs writes Karpenter's benchmark mix as a new user of `nodewright plan` would feed it: the
// pods as the YAML PodList kubectl prints, the 400 synthetic types as a catalog file, and the NodePool.
// It returns the plan arguments (JSON output).
func writeMixInputs(tb testing.TB, pods int) []string {
	tb.Helper()
	dir := tb.TempDir()
	list := corev1.PodList{}
	list.APIVersion, list.Kind = "v1", "PodList"
	for _, p := range schedulingtest.KarpenterMix(pods, mixSeed) {
		p.APIVersion, p.Kind = "v1", "Pod"
		list.Items = append(list.Items, *p)
	}
	podYAML, err := yaml.Marshal(list)
	if err != nil {
		tb.Fatal(err)
	}
	var catalog bytes.Buffer
	if err := provisioning.WriteCatalog(&catalog, provisioning.CatalogFrom(schedulingtest.InstanceTypes(400))); err != nil {
		tb.Fatal(err)
	}
	files := map[string][]byte{"pods.yaml": podYAML, "nodepools.yaml": []byte(mixNodePools), "instance-types.json": catalog.Bytes()}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return []string{"plan", "--pods", filepath.Join(dir, "pods.yaml"), "--nodepools", filepath.Join(dir, "nodepools.yaml"),
		"--instance-types", filepath.Join(dir, "instance-types.json"), "-o", "json"}
}

// mixPlanDoc is the part of the -o json document the mix benchmark and test read.
type mixPlanDoc struct {
	NodeClaims    []json.RawMessage `json:"nodeClaims"`
	Unschedulable []json.RawMessage `json:"unschedulable"`
	ReadSeconds   float64           `json:"readSeconds"`
	SolveSeconds  float64           `json:"solveSeconds"`
}

func runMixPlan(tb testing.TB, args []string) (mixPlanDoc, []byte) {
	tb.Helper()
	var out, errOut bytes.Buffer
	if code := dispatch(args, strings.NewReader(""), &out, &errOut); code != 0 {
		tb.Fatalf("exit %d: %s", code, errOut.String())
	}
	var doc mixPlanDoc
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		tb.Fatal(err)
	}
	if len(doc.Unschedulable) > 0 {
		tb.Fatalf("%d pods unschedulable", len(doc.Unschedulable))
	}
	return doc, out.Bytes()
}

// benchmarkPlanMix runs `nodewright plan -o json` on Karpenter's benchmark mix and reports the median of
// the solveSeconds the plan itself prints, to set beside BenchmarkSolveKarpenterMix*Pods (the solver
// called in-process on the same pods and catalog).
func benchmarkPlanMix(b *testing.B, pods int) {
	args := writeMixInputs(b, pods)
	var solves, reads []float64
	for b.Loop() {
		doc, _ := runMixPlan(b, args)
		solves, reads = append(solves, doc.SolveSeconds), append(reads, doc.ReadSeconds)
		b.ReportMetric(float64(len(doc.NodeClaims)), "claims")
	}
	slices.Sort(solves)
	slices.Sort(reads)
	b.ReportMetric(solves[len(solves)/2]*1000, "solve-ms-median")
	b.ReportMetric(reads[len(reads)/2]*1000, "read-ms-median")
	b.Logf("solveSeconds: %v; readSeconds: %v", solves, reads)
}

func BenchmarkPlanKarpenterMix5000Pods(b *testing.B)  { benchmarkPlanMix(b, 5000) }
func BenchmarkPlanKarpenterMix20000Pods(b *testing.B) { benchmarkPlanMix(b, 20000) }
