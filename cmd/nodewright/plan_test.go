package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/flows/provisioning"
)

// planFile names a sample input under testdata/plan.
func planFile(name string) string { return filepath.Join("testdata", "plan", name) }

// sampleArgs are every sample input; the tests add or drop what they need.
func sampleArgs(extra ...string) []string {
	return append([]string{
		"--pods", planFile("pods.yaml"), "--nodepools", planFile("nodepools.yaml"), "--instance-types", sampleCatalog,
		"--nodes", planFile("nodes.yaml"), "--daemonsets", planFile("daemonsets.yaml"),
	}, extra...)
}

func runPlanArgs(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = dispatch(append([]string{"plan"}, args...), strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

// catalogNames returns the instance types of the sample catalog.
func catalogNames(t *testing.T) map[string]bool {
	t.Helper()
	f, err := os.Open(sampleCatalog)
	require.NoError(t, err)
	defer f.Close()
	cat, err := provisioning.ReadCatalog(sampleCatalog, f)
	require.NoError(t, err)
	names := map[string]bool{}
	for _, e := range cat.InstanceTypes {
		names[e.Name] = true
	}
	return names
}

// planDoc is the part of the -o json document the tests read.
type planDoc struct {
	NodeClaims []struct {
		NodePool            string   `json:"nodePool"`
		InstanceType        string   `json:"instanceType"`
		InstanceTypeOptions []string `json:"instanceTypeOptions"`
		Zone                string   `json:"zone"`
		CapacityType        string   `json:"capacityType"`
		PricePerHour        float64  `json:"pricePerHour"`
		Pods                []string `json:"pods"`
		Why                 string   `json:"why"`
	} `json:"nodeClaims"`
	ExistingNodes []struct {
		Name string   `json:"name"`
		Pods []string `json:"pods"`
	} `json:"existingNodes"`
	Unschedulable []struct {
		Pod    string `json:"pod"`
		Reason string `json:"reason"`
	} `json:"unschedulable"`
	TotalPricePerHour float64  `json:"totalPricePerHour"`
	LowerBoundPerHour float64  `json:"lowerBoundPerHour"`
	CostRatio         float64  `json:"costRatio"`
	SolveSeconds      *float64 `json:"solveSeconds"`
	SolveMillis       *float64 `json:"solveMillis"`
}

func planJSONOf(t *testing.T, args ...string) planDoc {
	t.Helper()
	code, out, stderr := runPlanArgs(t, append(args, "-o", "json")...)
	require.Equal(t, 0, code, stderr)
	var doc planDoc
	require.NoError(t, json.Unmarshal([]byte(out), &doc), out)
	return doc
}

func TestPlanJSON(t *testing.T) {
	names := catalogNames(t)
	cases := []struct {
		name          string
		args          []string
		onNodes       int
		warning       string
		notOffering   string // instanceType/zone/capacityType no claim may launch
		launchesFirst string // the default claim's offering without --unavailable
	}{
		{name: "with existing nodes", args: sampleArgs(), onNodes: 3, launchesFirst: "c6g.8xlarge/us-east-1a/spot"},
		{name: "without nodes", args: sampleArgs()[:6], onNodes: 0, warning: "2 pod(s) bound to node ip-10-0-1-23.ec2.internal, which is not in --nodes: ignored"},
		{name: "with unavailable offerings", args: sampleArgs("--unavailable", planFile("unavailable.json")), onNodes: 3, notOffering: "c6g.8xlarge/us-east-1a/spot"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runPlanArgs(t, append(tc.args, "-o", "json")...)
			require.Equal(t, 0, code, stderr)
			if tc.warning != "" {
				assert.Contains(t, stderr, tc.warning)
			}
			doc := planJSONOf(t, tc.args...)

			require.Len(t, doc.NodeClaims, 2, "one GPU claim and one general-purpose claim")
			onClaims := 0
			pools := map[string]string{}
			total := 0.0
			for _, c := range doc.NodeClaims {
				assert.True(t, names[c.InstanceType], "%s is in the catalog", c.InstanceType)
				require.NotEmpty(t, c.InstanceTypeOptions)
				assert.LessOrEqual(t, len(c.InstanceTypeOptions), 60)
				assert.Contains(t, c.InstanceTypeOptions, c.InstanceType)
				for _, o := range c.InstanceTypeOptions {
					assert.True(t, names[o], "option %s is in the catalog", o)
				}
				assert.Contains(t, []string{"us-east-1a", "us-east-1b", "us-east-1c"}, c.Zone)
				assert.NotEmpty(t, c.Why)
				assert.Positive(t, c.PricePerHour)
				onClaims += len(c.Pods)
				total += c.PricePerHour
				pools[c.NodePool] = c.InstanceType + "/" + c.Zone + "/" + c.CapacityType
				assert.NotEqual(t, tc.notOffering, pools[c.NodePool])
			}
			assert.True(t, strings.HasPrefix(pools["gpu"], "g5."), "the GPU pod goes to a g5: %s", pools["gpu"])
			assert.True(t, strings.HasSuffix(pools["gpu"], "/on-demand"), "the gpu pool allows on-demand only")
			if tc.launchesFirst != "" {
				assert.Equal(t, tc.launchesFirst, pools["default"])
			}

			onNodes := 0
			for _, n := range doc.ExistingNodes {
				onNodes += len(n.Pods)
			}
			assert.Equal(t, tc.onNodes, onNodes)
			require.Len(t, doc.Unschedulable, 1)
			assert.Equal(t, "default/huge-0", doc.Unschedulable[0].Pod)
			assert.Contains(t, doc.Unschedulable[0].Reason, "nodepool gpu: did not tolerate taint nvidia.com/gpu=true:NoSchedule")
			assert.Contains(t, doc.Unschedulable[0].Reason, "nodepool default: no instance type has room for cpu=500 memory=64Gi")
			assert.Equal(t, 32, onNodes+onClaims+len(doc.Unschedulable), "30 inflate, 1 GPU and 1 huge pod, 1 pod already running")

			assert.InDelta(t, total, doc.TotalPricePerHour, 1e-9)
			assert.Positive(t, doc.LowerBoundPerHour)
			assert.LessOrEqual(t, doc.LowerBoundPerHour, doc.TotalPricePerHour)
			require.NotNil(t, doc.SolveSeconds)
			require.NotNil(t, doc.SolveMillis)
			assert.InDelta(t, *doc.SolveSeconds*1000, *doc.SolveMillis, 0.01)
		})
	}
}

func TestPlanTable(t *testing.T) {
	names := catalogNames(t)
	code, out, stderr := runPlanArgs(t, sampleArgs()...)
	require.Equal(t, 0, code, stderr)
	assert.Empty(t, stderr)

	lines := strings.Split(out, "\n")
	require.True(t, strings.HasPrefix(lines[0], "NODEPOOL"), out)
	assert.Equal(t, []string{"NODEPOOL", "INSTANCE", "TYPE", "ZONE", "CAPACITY", "$/H", "PODS", "OPTIONS"}, strings.Fields(lines[0]))
	var claims [][]string
	for _, l := range lines[1:] {
		if l == "" {
			break
		}
		claims = append(claims, strings.Fields(l))
	}
	require.Len(t, claims, 2, out)
	for _, c := range claims {
		assert.True(t, names[c[1]], "%s is in the catalog", c[1])
	}
	assert.Equal(t, []string{"gpu", "g5.xlarge", "us-east-1a", "on-demand", "1.0060", "1", "g5.xlarge,g5.2xlarge,g5.4xlarge", "(+5)"}, claims[0])
	assert.Equal(t, "default", claims[1][0])
	assert.Equal(t, "27", claims[1][5])

	assert.Contains(t, out, "EXISTING NODE              PODS PLACED\nip-10-0-1-23.ec2.internal  3\n")
	assert.Contains(t, out, "UNSCHEDULABLE POD  REASON\ndefault/huge-0     ")
	assert.Contains(t, out, "short on [cpu]")
	assert.Contains(t, out, "\nclaims: 2\n")
	assert.Contains(t, out, "\npods: 32 pending; 3 on existing nodes, 28 on new claims, 1 unschedulable\n")
	assert.Regexp(t, `\ncost: \$2\.0940/h, lower bound \$[0-9.]+/h, ratio [0-9.]+\n`, out)
	assert.Regexp(t, `\nsolve: [0-9.]+[µm]?s \(reading the input: [0-9.]+[µm]?s\)\n$`, out)
}

func TestPlanErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
		return path
	}
	cases := []struct {
		name      string
		args      []string
		code      int
		stderrHas []string
	}{
		{name: "help", args: []string{"-h"}, code: 0, stderrHas: []string{"Usage: nodewright plan"}},
		{name: "no flags", code: 2, stderrHas: []string{"Usage: nodewright plan"}},
		{name: "missing instance types", args: []string{"--pods", planFile("pods.yaml"), "--nodepools", planFile("nodepools.yaml")}, code: 2},
		{name: "unknown output", args: sampleArgs("-o", "yaml"), code: 2},
		{name: "unknown flag", args: sampleArgs("--dry-run"), code: 2, stderrHas: []string{"flag provided but not defined: -dry-run"}},
		{name: "extra argument", args: sampleArgs("now"), code: 2},
		{
			name: "invalid nodepools",
			args: []string{"--pods", planFile("pods.yaml"), "--nodepools", filepath.Join(testdata, "invalid", "nodepool.yaml"), "--instance-types", sampleCatalog},
			code: 1, stderrHas: []string{`NodePool/broken: spec.weight: Invalid value: 0`, "3 problems found"},
		},
		{
			name: "missing pods file",
			args: []string{"--pods", filepath.Join(dir, "nope.yaml"), "--nodepools", planFile("nodepools.yaml"), "--instance-types", sampleCatalog},
			code: 1, stderrHas: []string{"nope.yaml: no such file or directory"},
		},
		{
			name: "nodes given as pods",
			args: []string{"--pods", planFile("nodes.yaml"), "--nodepools", planFile("nodepools.yaml"), "--instance-types", sampleCatalog},
			code: 1, stderrHas: []string{`nodes.yaml: document 1, items[0]: kind "Node", want Pod`},
		},
		{
			name: "malformed pod",
			args: []string{"--pods", write("bad-pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: oops\n"), "--nodepools", planFile("nodepools.yaml"), "--instance-types", sampleCatalog},
			code: 1, stderrHas: []string{"bad-pod.yaml: document 1: json: cannot unmarshal string"},
		},
		{
			name: "pods given as catalog",
			args: []string{"--pods", planFile("pods.yaml"), "--nodepools", planFile("nodepools.yaml"), "--instance-types", planFile("pods.yaml")},
			code: 1, stderrHas: []string{"pods.yaml: invalid catalog JSON"},
		},
		{
			name: "bad unavailable",
			args: sampleArgs("--unavailable", write("unavailable.json", `[{"instanceType":"m5.large"}]`)),
			code: 1, stderrHas: []string{"unavailable.json: [0]: instanceType, zone and capacityType are all required"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := runPlanArgs(t, tc.args...)
			assert.Equal(t, tc.code, code, stderr)
			if tc.code != 0 {
				assert.Empty(t, out)
			}
			for _, s := range tc.stderrHas {
				assert.Contains(t, stderr, s)
			}
		})
	}
}

func TestPlanComputesAllocatablePerNodeClass(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
		return path
	}
	// A catalog as the scheduling issue describes it: a bare array, no allocatable.
	catalog := write("catalog.json", `[{"name":"m5.xlarge","cpuMillis":4000,"memoryMiB":16384,"pods":58,"arch":"amd64","os":"linux",
		"offerings":[{"zone":"us-east-1a","capacityType":"on-demand","price":0.192,"available":true}]}]`)
	pods := write("pods.yaml", `apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Pod, metadata: {name: a, namespace: default}, spec: {containers: [{name: c, image: i, resources: {requests: {cpu: 100m}}}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: b, namespace: default}, spec: {containers: [{name: c, image: i, resources: {requests: {cpu: 100m}}}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: c, namespace: default}, spec: {containers: [{name: c, image: i, resources: {requests: {cpu: 100m}}}]}}
`)
	pools := func(kubelet string) string {
		return write("nodepools.yaml", `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      requirements: []
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  role: NodeRole
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  amiSelectorTerms: [{alias: al2023@latest}]
`+kubelet)
	}
	cases := []struct {
		name    string
		kubelet string
		claims  int
	}{
		{name: "ENI-limited density", claims: 1},
		{name: "maxPods 2 from the node class", kubelet: "  kubelet: {maxPods: 2}\n", claims: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc := planJSONOf(t, "--pods", pods, "--nodepools", pools(tc.kubelet), "--instance-types", catalog)
			assert.Len(t, doc.NodeClaims, tc.claims)
			assert.Empty(t, doc.Unschedulable)
		})
	}
}
