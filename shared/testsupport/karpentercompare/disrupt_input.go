package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/apis/manifest"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/flows/provisioning"
)

// disruptFiles are the input files of `nodewright plan --disrupt` for one cluster. PDBs and
// DaemonSets are optional (empty path).
type disruptFiles struct {
	Nodes, Pods, PDBs, NodePools, Catalog, DaemonSets string
}

// findDisruptFiles looks for nodes.json, pods.json, pdbs.json, nodepools.yaml, instance-types.json
// and daemonsets.yaml in dir; a file absent from dir is taken from its parent directory, the layout
// of cmd/nodewright/testdata/disrupt (scenarios share their parent's NodePools, catalog and
// DaemonSets).
func findDisruptFiles(dir string) (disruptFiles, error) {
	find := func(name string, required bool) (string, error) {
		for _, d := range []string{dir, filepath.Dir(filepath.Clean(dir))} {
			p := filepath.Join(d, name)
			if _, err := os.Stat(p); err == nil {
				return p, nil
			}
		}
		if required {
			return "", fmt.Errorf("%s: no %s in it or its parent", dir, name)
		}
		return "", nil
	}
	var f disruptFiles
	var err error
	for _, x := range []struct {
		path     *string
		name     string
		required bool
	}{
		{&f.Nodes, "nodes.json", true}, {&f.Pods, "pods.json", true}, {&f.PDBs, "pdbs.json", false},
		{&f.NodePools, "nodepools.yaml", true}, {&f.Catalog, "instance-types.json", true},
		{&f.DaemonSets, "daemonsets.yaml", false},
	} {
		if *x.path, err = find(x.name, x.required); err != nil {
			return disruptFiles{}, err
		}
	}
	return f, nil
}

// disruptCase is one cluster of the disruption comparison, read from its files.
type disruptCase struct {
	Name       string
	Files      disruptFiles
	Nodes      []*corev1.Node
	Pods       []*corev1.Pod
	PDBs       []*policyv1.PodDisruptionBudget
	DaemonSets []*appsv1.DaemonSet
	// Pools are the NodePools as Karpenter reads them (karpenter.sh/v1).
	Pools []*karpv1.NodePool
	// Types is each NodePool's catalog as `nodewright plan` builds it (the EC2NodeClass's allocatable
	// settings applied when the catalog computes allocatable).
	Types map[string][]*scheduling.InstanceType
	// Prices are the catalog's offering prices, as plan --disrupt prices a node from its labels.
	Prices map[scheduling.OfferingKey]float64
}

// readDisruptCase reads the files of one cluster.
func readDisruptCase(name string, f disruptFiles) (*disruptCase, error) {
	c := &disruptCase{Name: name, Files: f}
	var err error
	if c.Nodes, err = readKubeFile[corev1.Node](f.Nodes, "Node"); err != nil {
		return nil, err
	}
	if c.Pods, err = readKubeFile[corev1.Pod](f.Pods, "Pod"); err != nil {
		return nil, err
	}
	if f.PDBs != "" {
		if c.PDBs, err = readKubeFile[policyv1.PodDisruptionBudget](f.PDBs, "PodDisruptionBudget"); err != nil {
			return nil, err
		}
	}
	if f.DaemonSets != "" {
		if c.DaemonSets, err = readKubeFile[appsv1.DaemonSet](f.DaemonSets, "DaemonSet"); err != nil {
			return nil, err
		}
	}
	if c.Pools, err = readKubeFile[karpv1.NodePool](f.NodePools, "NodePool"); err != nil {
		return nil, err
	}
	for _, p := range c.Pools {
		// Nodewright reads a missing consolidateAfter as 0s; Karpenter's CRD requires the field
		// (its Go type would write a missing one as Never, disabling consolidation).
		if d := &p.Spec.Disruption.ConsolidateAfter; d.Duration == nil && d.Raw == nil {
			*d = karpv1.MustParseNillableDuration("0s")
		}
	}
	if c.Types, c.Prices, err = poolCatalogs(f); err != nil {
		return nil, err
	}
	return c, nil
}

// poolCatalogs builds each NodePool's catalog the way `nodewright plan` does, and the price index.
func poolCatalogs(f disruptFiles) (map[string][]*scheduling.InstanceType, map[scheduling.OfferingKey]float64, error) {
	objs, problems := manifest.Check(nil, f.NodePools)
	if len(problems) > 0 {
		return nil, nil, fmt.Errorf("%s: %w", f.NodePools, errors.Join(problems...))
	}
	pools, err := provisioning.NodePoolsFrom(objs)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", f.NodePools, err)
	}
	file, err := os.Open(f.Catalog)
	if err != nil {
		return nil, nil, err
	}
	defer file.Close()
	catalog, err := provisioning.ReadCatalog(f.Catalog, file)
	if err != nil {
		return nil, nil, err
	}
	base, err := catalog.Build(scheduling.NodeClassConfig{})
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", f.Catalog, err)
	}
	byClass := map[string][]*scheduling.InstanceType{}
	out := map[string][]*scheduling.InstanceType{}
	for _, p := range pools {
		out[p.Name] = base
		if !catalog.ComputesAllocatable() {
			continue
		}
		name := provisioning.NodeClassRefName(p)
		nc := nodeClass(objs, name)
		if nc == nil {
			continue
		}
		if _, ok := byClass[name]; !ok {
			cfg, err := provisioning.NodeClassConfigFrom(nc)
			if err != nil {
				return nil, nil, err
			}
			if byClass[name], err = catalog.Build(cfg); err != nil {
				return nil, nil, fmt.Errorf("%s: EC2NodeClass %s: %w", f.Catalog, name, err)
			}
		}
		out[p.Name] = byClass[name]
	}
	return out, scheduling.OfferingPrices(base), nil
}

func nodeClass(objs apis.Objects, name string) *apis.EC2NodeClass {
	for _, nc := range objs.EC2NodeClasses {
		if nc.Name == name {
			return nc
		}
	}
	return nil
}

// nodePrice is the catalog price of a node from its instance-type, zone and capacity-type labels.
func (c *disruptCase) nodePrice(n *corev1.Node) float64 {
	l := n.Labels
	return c.Prices[scheduling.OfferingKey{InstanceType: l[corev1.LabelInstanceTypeStable], Zone: l[corev1.LabelTopologyZone], CapacityType: l[karpv1.CapacityTypeLabelKey]}]
}

// ours reports whether a node is a NodePool's, as plan --disrupt counts Nodewright's nodes: the
// karpenter.sh/nodepool label names a NodePool of the input and karpenter.sh/initialized is "true".
func (c *disruptCase) ours(n *corev1.Node) bool {
	return c.poolNode(n) && n.Labels[karpv1.NodeInitializedLabelKey] == "true"
}

// poolNode reports whether a node's karpenter.sh/nodepool label names a NodePool of the input.
func (c *disruptCase) poolNode(n *corev1.Node) bool {
	pool := n.Labels[karpv1.NodePoolLabelKey]
	for _, p := range c.Pools {
		if pool != "" && p.Name == pool {
			return true
		}
	}
	return false
}

// costOf sums the prices of the NodePools' nodes among nodes.
func (c *disruptCase) costOf(nodes []*corev1.Node) float64 {
	total := 0.0
	for _, n := range nodes {
		if c.ours(n) {
			total += c.nodePrice(n)
		}
	}
	return total
}

// readKubeFile reads every object of kind from a JSON or multi-document YAML file, expanding lists.
func readKubeFile[T any](path, kind string) ([]*T, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*T
	for doc := 1; ; doc++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", path, doc, err)
		}
		if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
			continue
		}
		var meta struct {
			Kind  string            `json:"kind"`
			Items []json.RawMessage `json:"items"`
		}
		if err := json.Unmarshal(raw, &meta); err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", path, doc, err)
		}
		items := []json.RawMessage{raw}
		if strings.HasSuffix(meta.Kind, "List") {
			items = meta.Items
		} else if meta.Kind != kind {
			continue // another kind of the same file (an EC2NodeClass beside the NodePools)
		}
		for i, item := range items {
			var itemMeta struct {
				Kind string `json:"kind"`
			}
			if err := json.Unmarshal(item, &itemMeta); err == nil && itemMeta.Kind != "" && itemMeta.Kind != kind {
				continue
			}
			obj := new(T)
			if err := json.Unmarshal(item, obj); err != nil {
				return nil, fmt.Errorf("%s: document %d, item %d: %w", path, doc, i, err)
			}
			out = append(out, obj)
		}
	}
	return out, nil
}
