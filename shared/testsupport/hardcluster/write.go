package hardcluster

import (
	"encoding/json"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Files are the paths of a written cluster: the inputs of `nodewright plan --disrupt`.
type Files struct {
	Nodes, Pods, PDBs, NodePools, Catalog, DaemonSets string
}

// Args are plan's flags for the files, with extra appended.
func (f Files) Args(extra ...string) []string {
	args := []string{"--disrupt", "--nodes", f.Nodes, "--pods", f.Pods, "--pdbs", f.PDBs,
		"--nodepools", f.NodePools, "--instance-types", f.Catalog, "--daemonsets", f.DaemonSets}
	return append(args, extra...)
}

// Write writes the cluster into dir as nodes.json, pods.json, pdbs.json, nodepools.yaml,
// instance-types.json and daemonsets.yaml.
func (c *Cluster) Write(dir string) (Files, error) {
	f := Files{
		Nodes: filepath.Join(dir, "nodes.json"), Pods: filepath.Join(dir, "pods.json"), PDBs: filepath.Join(dir, "pdbs.json"),
		NodePools: filepath.Join(dir, "nodepools.yaml"), Catalog: filepath.Join(dir, "instance-types.json"),
		DaemonSets: filepath.Join(dir, "daemonsets.yaml"),
	}
	for _, w := range []struct {
		path string
		v    any
	}{
		{f.Nodes, corev1.NodeList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "NodeList"}, Items: c.Nodes}},
		{f.Pods, corev1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"}, Items: c.Pods}},
		{f.PDBs, policyv1.PodDisruptionBudgetList{TypeMeta: metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudgetList"}, Items: c.PDBs}},
		{f.Catalog, c.Catalog},
	} {
		if err := writeJSON(w.path, w.v); err != nil {
			return f, err
		}
	}
	if err := os.WriteFile(f.NodePools, []byte(NodePools), 0o644); err != nil {
		return f, err
	}
	return f, os.WriteFile(f.DaemonSets, []byte(DaemonSets), 0o644)
}

// WriteRemaining writes to path, as a PodList of pending pods, the deployments' pods left on the
// NodePool's initialized nodes: the pods consolidation may move. Planned on an empty cluster with
// the same NodePool, catalog and DaemonSet they give the LP lower bound of any consolidation. With
// movableOnly, the pods of nodes no consolidation may empty (those running a guarded pod) are left
// out too.
func (c *Cluster) WriteRemaining(path string, movableOnly bool) error {
	pool := map[string]bool{}
	for _, n := range c.Nodes {
		if n.Labels["karpenter.sh/initialized"] == "true" {
			pool[n.Name] = true
		}
	}
	if movableOnly {
		for _, p := range c.Pods {
			if p.Labels["app"] == guardedApp {
				delete(pool, p.Spec.NodeName)
			}
		}
	}
	list := corev1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"}}
	for _, p := range c.Pods {
		if !pool[p.Spec.NodeName] || p.OwnerReferences[0].Kind == "DaemonSet" {
			continue
		}
		q := p.DeepCopy()
		q.Spec.NodeName = ""
		q.Status = corev1.PodStatus{Phase: corev1.PodPending}
		list.Items = append(list.Items, *q)
	}
	return writeJSON(path, list)
}

// PinnedPricePerHour is what the NodePool's initialized nodes running a guarded pod cost: no
// consolidation can remove them.
func (c *Cluster) PinnedPricePerHour() float64 {
	guarded := map[string]bool{}
	for _, p := range c.Pods {
		if p.Labels["app"] == guardedApp {
			guarded[p.Spec.NodeName] = true
		}
	}
	total := 0.0
	for _, n := range c.Nodes {
		if guarded[n.Name] {
			total += c.price(n)
		}
	}
	return total
}

// price is n's price in the catalog.
func (c *Cluster) price(n corev1.Node) float64 {
	for i := range c.Catalog {
		if e := &c.Catalog[i]; e.Name == n.Labels["node.kubernetes.io/instance-type"] {
			return priceOf(e, n.Labels["karpenter.sh/capacity-type"], n.Labels["topology.kubernetes.io/zone"])
		}
	}
	return 0
}

func writeJSON(path string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}
