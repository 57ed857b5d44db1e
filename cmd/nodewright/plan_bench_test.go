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

	"github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
)

// writeGeneratedPods writes a PodList of the mixed workload (web, api, worker, cache, batch, ml and
// sidecar-heavy deployments) at the given scale; scale 50 is 5000 pods.
func writeGeneratedPods(tb testing.TB, scale int) string {
	tb.Helper()
	list := corev1.PodList{}
	list.APIVersion, list.Kind = "v1", "PodList"
	for _, p := range schedulingtest.DeploymentPods(schedulingtest.MixedWorkload(scale)) {
		list.Items = append(list.Items, *p)
	}
	data, err := json.Marshal(list)
	if err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(tb.TempDir(), "pods.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// benchNodePools is the sample's general-purpose NodePool without its CPU limit, which 5000 pods exceed.
const benchNodePools = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      requirements:
        - {key: kubernetes.io/arch, operator: In, values: [amd64, arm64]}
        - {key: karpenter.sh/capacity-type, operator: In, values: [spot, on-demand]}
        - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m, r]}
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

// BenchmarkPlan5000Pods runs the whole command (reading, validating, solving, printing JSON) on 5000
// generated pods with an unlimited general-purpose NodePool, the sample catalog and DaemonSets, and reports the median solve time the command
// measures beside the usual time per run.
func BenchmarkPlan5000Pods(b *testing.B) {
	pods := writeGeneratedPods(b, 50)
	pools := filepath.Join(b.TempDir(), "nodepools.yaml")
	if err := os.WriteFile(pools, []byte(benchNodePools), 0o644); err != nil {
		b.Fatal(err)
	}
	args := []string{"plan", "--pods", pods, "--nodepools", pools, "--instance-types", sampleCatalog,
		"--daemonsets", planFile("daemonsets.yaml"), "-o", "json"}
	var solves []float64
	for b.Loop() {
		var out, errOut bytes.Buffer
		if code := dispatch(args, strings.NewReader(""), &out, &errOut); code != 0 {
			b.Fatalf("exit %d: %s", code, errOut.String())
		}
		var doc struct {
			NodeClaims    []json.RawMessage `json:"nodeClaims"`
			Unschedulable []json.RawMessage `json:"unschedulable"`
			CostRatio     float64           `json:"costRatio"`
			SolveMillis   float64           `json:"solveMillis"`
		}
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
			b.Fatal(err)
		}
		if len(doc.Unschedulable) > 0 {
			b.Fatalf("%d pods unschedulable", len(doc.Unschedulable))
		}
		solves = append(solves, doc.SolveMillis)
		b.ReportMetric(float64(len(doc.NodeClaims)), "claims")
		b.ReportMetric(doc.CostRatio, "cost-ratio")
	}
	slices.Sort(solves)
	b.ReportMetric(solves[len(solves)/2], "solve-ms-median")
	b.Logf("solve ms: %v", solves)
}
