package main

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/nodewright/nodewright/shared/core/apis/manifest"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// fuzzCatalogSeed is the first entries of the sample catalog: big enough to plan the samples, small
// enough for the fuzzer to mutate quickly.
func fuzzCatalogSeed(f *testing.F, n int) []byte {
	f.Helper()
	data, err := os.ReadFile(sampleCatalog)
	if err != nil {
		f.Fatal(err)
	}
	var entries []json.RawMessage
	if err := json.Unmarshal(data, &entries); err != nil {
		f.Fatal(err)
	}
	out, err := json.Marshal(entries[:min(n, len(entries))])
	if err != nil {
		f.Fatal(err)
	}
	return out
}

// fuzzPodsSeed is the sample pods without most of the identical inflate replicas, as a JSON List: the
// fuzzer minimises every new input it finds, which is slow on the whole 25 KB sample.
func fuzzPodsSeed(f *testing.F) []byte {
	f.Helper()
	data, err := os.ReadFile(planFile("pods.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	var list struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Items      []json.RawMessage `json:"items"`
	}
	if err := yaml.Unmarshal(data, &list); err != nil {
		f.Fatal(err)
	}
	var keep []json.RawMessage
	inflate := 0
	for _, item := range list.Items {
		if bytes.Contains(item, []byte(`"inflate-`)) {
			if inflate++; inflate > 2 {
				continue
			}
		}
		keep = append(keep, item)
	}
	list.Items = keep
	out, err := json.Marshal(list)
	if err != nil {
		f.Fatal(err)
	}
	return out
}

// FuzzPlanInputs runs plan's input loading and solve over arbitrary --pods, --nodes and
// --instance-types files with the sample NodePools. Whatever the bytes, it never panics, and it either
// refuses the input with an error or returns a plan in which every pod appears once, every new claim's
// pods fit every instance type it may launch as, the pods on an existing node fit its allocatable
// beside the pods already bound there, prices are finite, and the plan prints.
func FuzzPlanInputs(f *testing.F) {
	objs, problems := manifest.Check(nil, planFile("nodepools.yaml"))
	if len(problems) > 0 {
		f.Fatalf("sample NodePools: %v", problems)
	}
	read := func(path string) []byte {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		return data
	}
	pods, nodes := fuzzPodsSeed(f), read(planFile("nodes.yaml"))
	catalog := fuzzCatalogSeed(f, 6)
	small := []byte(oneType("2000", "0.096"))
	f.Add(pods, nodes, catalog)
	f.Add(pods, []byte{}, catalog)
	f.Add([]byte(onePod("100m", "100Mi")), []byte{}, small)
	f.Add([]byte(onePod("-1", "1Gi")), []byte{}, small)
	f.Add([]byte(onePod("1e18", "1Gi")), []byte{}, small)
	f.Add([]byte(onePod("1", "1e19")), nodes, small)
	f.Add([]byte(onePod("100m", "100Mi")), []byte{}, []byte(oneType("-2000", "0.096")))
	f.Add([]byte(onePod("100m", "100Mi")), []byte{}, []byte(oneType("2000", "1e308")))
	f.Add(pods, []byte(`{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"},"status":{"allocatable":{"cpu":"-4"}}}`), small)

	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, podsFile, nodesFile, typesFile []byte) {
		fl := planFlags{
			pods: filepath.Join(dir, "pods.yaml"), nodePools: planFile("nodepools.yaml"),
			instanceTypes: filepath.Join(dir, "instance-types.json"), output: "table",
		}
		write(t, fl.pods, podsFile)
		write(t, fl.instanceTypes, typesFile)
		if len(nodesFile) > 0 {
			fl.nodes = filepath.Join(dir, "nodes.yaml")
			write(t, fl.nodes, nodesFile)
		}
		in, err := planInput(fl, objs, func(string) {})
		if err != nil {
			if strings.TrimSpace(err.Error()) == "" {
				t.Fatal("an empty error")
			}
			t.Logf("refused: %v", err)
			return
		}
		plan, err := scheduling.Solve(*in)
		if err != nil {
			t.Logf("solve refused: %v", err) // a clean error; the CLI prints it and exits 1
			return
		}
		checkPlan(t, in, plan)
		t.Logf("planned %d pods: %d new claims, %d on existing nodes, %d unschedulable",
			len(in.Pods), len(plan.NewClaims), len(plan.ExistingNodes), len(plan.Unschedulable))
		if err := writePlanTable(io.Discard, plan, planTimes{}, len(in.Pods)); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := writePlanJSON(&out, plan, planTimes{}); err != nil {
			t.Fatalf("the plan does not encode: %v", err)
		}
	})
}

func write(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// checkPlan asserts what any plan must satisfy, recomputing requests from the pods themselves.
func checkPlan(t *testing.T, in *scheduling.Input, plan *scheduling.Plan) {
	t.Helper()
	if math.IsNaN(plan.TotalPrice) || math.IsInf(plan.TotalPrice, 0) || plan.TotalPrice < 0 {
		t.Fatalf("total price %v", plan.TotalPrice)
	}
	seen := map[*corev1.Pod]int{}
	types := map[string]map[string]*scheduling.InstanceType{}
	for _, p := range in.NodePools {
		list := p.InstanceTypes
		if list == nil {
			list = in.InstanceTypes
		}
		types[p.Name] = map[string]*scheduling.InstanceType{}
		for _, it := range list {
			types[p.Name][it.Name] = it
		}
	}
	for _, c := range plan.NewClaims {
		if math.IsNaN(c.Price) || math.IsInf(c.Price, 0) || c.Price < 0 {
			t.Fatalf("claim %s: price %v", c.Name, c.Price)
		}
		var sum scheduling.Resources
		for _, p := range c.Pods {
			seen[p]++
			sum = sum.Add(scheduling.PodRequests(p))
		}
		for _, name := range c.InstanceTypeOptions {
			it := types[c.NodePool][name]
			if it == nil {
				t.Fatalf("claim %s: option %s is not in NodePool %s's catalog", c.Name, name, c.NodePool)
			}
			if !sum.Fits(it.Allocatable) {
				t.Fatalf("claim %s: pods request %s, more than %s's allocatable %s", c.Name, sum, name, it.Allocatable)
			}
		}
	}
	nodes := map[string]scheduling.ExistingNode{}
	for _, n := range in.Nodes {
		nodes[n.Node.Name] = n
	}
	for _, placed := range plan.ExistingNodes {
		n, ok := nodes[placed.Name]
		if !ok {
			t.Fatalf("pods placed on unknown node %s", placed.Name)
		}
		var used scheduling.Resources
		for _, p := range n.Pods {
			if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed && p.DeletionTimestamp == nil {
				used = used.Add(scheduling.PodRequests(p))
			}
		}
		for _, p := range placed.Pods {
			seen[p]++
			used = used.Add(scheduling.PodRequests(p))
		}
		if alloc := scheduling.ResourcesFromList(n.Node.Status.Allocatable); !used.Fits(alloc) {
			t.Fatalf("node %s: pods request %s, more than its allocatable %s", placed.Name, used, alloc)
		}
	}
	for _, u := range plan.Unschedulable {
		seen[u.Pod]++
		if u.Reason == "" {
			t.Fatalf("pod %s: unschedulable without a reason", u.PodName)
		}
	}
	for _, p := range in.Pods {
		if seen[p] != 1 {
			t.Fatalf("pod %s/%s appears %d times in the plan", p.Namespace, p.Name, seen[p])
		}
	}
	if len(seen) != len(in.Pods) {
		t.Fatalf("the plan has %d pods, the input %d pending", len(seen), len(in.Pods))
	}
}
