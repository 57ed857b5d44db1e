package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsjson "sigs.k8s.io/json"

	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// kubeDoc is one Kubernetes object read from a file, as JSON, with where it came from.
type kubeDoc struct {
	where string // "file: document N" or "file: document N, items[i]"
	kind  string
	json  []byte
}

// typeMeta is what readKubeDocs needs to tell objects and lists apart.
type typeMeta struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Items      []json.RawMessage `json:"items"`
}

// readKubeDocs reads multi-document YAML or a stream of JSON objects, as kubectl prints them, and
// expands lists (List, PodList, ...) into their items. Items without a kind take the list's element kind.
func readKubeDocs(path string) ([]kubeDoc, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var docs [][]byte
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '{' {
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		for {
			var raw json.RawMessage
			if err := dec.Decode(&raw); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				return nil, fmt.Errorf("%s: document %d: invalid JSON: %w", path, len(docs)+1, err)
			}
			docs = append(docs, raw)
		}
	} else {
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for {
			doc, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("%s: document %d: %w", path, len(docs)+1, err)
			}
			j, err := listYAMLToJSON(doc)
			if err != nil {
				return nil, fmt.Errorf("%s: document %d: invalid YAML: %w", path, len(docs)+1, err)
			}
			docs = append(docs, j)
		}
	}
	var out []kubeDoc
	for i, doc := range docs {
		where := fmt.Sprintf("%s: document %d", path, i+1)
		if t := bytes.TrimSpace(doc); len(t) == 0 || bytes.Equal(t, []byte("null")) {
			continue
		}
		var tm typeMeta
		if err := json.Unmarshal(doc, &tm); err != nil {
			return nil, fmt.Errorf("%s: not a Kubernetes object: %w", where, err)
		}
		if !strings.HasSuffix(tm.Kind, "List") {
			out = append(out, kubeDoc{where: where, kind: tm.Kind, json: doc})
			continue
		}
		element := strings.TrimSuffix(tm.Kind, "List")
		for j, item := range tm.Items {
			var itm typeMeta
			if err := json.Unmarshal(item, &itm); err != nil {
				return nil, fmt.Errorf("%s, items[%d]: not a Kubernetes object: %w", where, j, err)
			}
			kind := itm.Kind
			if kind == "" {
				kind = element
			}
			out = append(out, kubeDoc{where: fmt.Sprintf("%s, items[%d]", where, j), kind: kind, json: item})
		}
	}
	return out, nil
}

// readKube decodes every object of a file as kind. An object of another kind is an error. Fields the
// Go types do not know (a newer cluster's) are reported as warnings and otherwise ignored, so that
// kubectl output from any recent version reads.
func readKube[T any](path, kind string, warn func(string)) ([]*T, error) {
	return readKubeChecked[T](path, kind, warn, nil)
}

// readKubeChecked is readKube that also runs check, when given, on every object; its error is
// prefixed with where the object is in the file.
func readKubeChecked[T any](path, kind string, warn func(string), check func(*T) error) ([]*T, error) {
	docs, err := readKubeDocs(path)
	if err != nil {
		return nil, err
	}
	// Objects are decoded and checked on every CPU (20,000 pods take a while on one); warnings and the
	// first error come in file order, as one pass over the file would give them.
	type decoded struct {
		obj    *T
		strict []error
		err    error
	}
	results := make([]decoded, len(docs))
	forEachParallel(len(docs), func(i int) {
		d, r := docs[i], &results[i]
		if d.kind != kind {
			r.err = fmt.Errorf("%s: kind %q, want %s", d.where, d.kind, kind)
			return
		}
		r.obj = new(T)
		if r.strict, r.err = sigsjson.UnmarshalStrict(d.json, r.obj, sigsjson.DisallowUnknownFields); r.err != nil {
			r.err = fmt.Errorf("%s: %w", d.where, r.err)
			return
		}
		if check != nil {
			if err := check(r.obj); err != nil {
				r.err = fmt.Errorf("%s: %w", d.where, err)
			}
		}
	})
	out := make([]*T, 0, len(docs))
	for i, r := range results {
		for _, s := range r.strict {
			warn(fmt.Sprintf("%s: %v (ignored)", docs[i].where, s))
		}
		if r.err != nil {
			return nil, r.err
		}
		out = append(out, r.obj)
	}
	return out, nil
}

// readPods reads Pods and refuses any whose requests, limits or overhead are negative or too large
// for the scheduler (scheduling.ValidatePodResources).
func readPods(path string, warn func(string)) ([]*corev1.Pod, error) {
	return readKubeChecked(path, "Pod", warn, func(p *corev1.Pod) error {
		if err := scheduling.ValidatePodResources(p); err != nil {
			return fmt.Errorf("pod %s/%s: %w", p.Namespace, p.Name, err)
		}
		return nil
	})
}

// readNodes reads Nodes and refuses any whose capacity or allocatable is negative or too large.
func readNodes(path string, warn func(string)) ([]*corev1.Node, error) {
	return readKubeChecked(path, "Node", warn, func(n *corev1.Node) error {
		if err := scheduling.ValidateNodeResources(n); err != nil {
			return fmt.Errorf("node %s: %w", n.Name, err)
		}
		return nil
	})
}

// readDaemonSets reads DaemonSets and checks their pod templates' resources like readPods.
func readDaemonSets(path string, warn func(string)) ([]*appsv1.DaemonSet, error) {
	return readKubeChecked(path, "DaemonSet", warn, func(ds *appsv1.DaemonSet) error {
		if err := scheduling.ValidatePodResources(&corev1.Pod{Spec: ds.Spec.Template.Spec}); err != nil {
			return fmt.Errorf("daemonset %s/%s: spec.template: %w", ds.Namespace, ds.Name, err)
		}
		return nil
	})
}

// readVolumes reads PersistentVolumeClaims, PersistentVolumes, StorageClasses and CSINodes from one
// file (as `kubectl get pvc,pv,storageclass,csinode -A -o yaml` prints them) into the solver's input.
func readVolumes(path string, in *scheduling.Input, warn func(string)) error {
	docs, err := readKubeDocs(path)
	if err != nil {
		return err
	}
	for _, d := range docs {
		var target any
		switch d.kind {
		case "PersistentVolumeClaim":
			pvc := &corev1.PersistentVolumeClaim{}
			in.PersistentVolumeClaims, target = append(in.PersistentVolumeClaims, pvc), pvc
		case "PersistentVolume":
			pv := &corev1.PersistentVolume{}
			in.PersistentVolumes, target = append(in.PersistentVolumes, pv), pv
		case "StorageClass":
			sc := &storagev1.StorageClass{}
			in.StorageClasses, target = append(in.StorageClasses, sc), sc
		case "CSINode":
			csi := &storagev1.CSINode{}
			in.CSINodes, target = append(in.CSINodes, csi), csi
		default:
			return fmt.Errorf("%s: kind %q, want PersistentVolumeClaim, PersistentVolume, StorageClass or CSINode", d.where, d.kind)
		}
		strict, err := sigsjson.UnmarshalStrict(d.json, target, sigsjson.DisallowUnknownFields)
		if err != nil {
			return fmt.Errorf("%s: %w", d.where, err)
		}
		for _, s := range strict {
			warn(fmt.Sprintf("%s: %v (ignored)", d.where, s))
		}
	}
	return nil
}

// usesClaims reports whether any pod mounts a persistent volume claim (directly or ephemeral).
func usesClaims(pods []*corev1.Pod) bool {
	for _, p := range pods {
		for _, v := range p.Spec.Volumes {
			if v.PersistentVolumeClaim != nil || v.Ephemeral != nil {
				return true
			}
		}
	}
	return false
}

// unavailableOffering is one entry of the --unavailable file.
type unavailableOffering struct {
	InstanceType string `json:"instanceType"`
	Zone         string `json:"zone"`
	CapacityType string `json:"capacityType"`
	// ReservationID, when set, takes out that one capacity reservation only.
	ReservationID string `json:"reservationID,omitempty"`
}

// readUnavailable reads a JSON list of offerings known to have no capacity.
func readUnavailable(path string) (scheduling.UnavailableOfferings, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var list []unavailableOffering
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&list); err != nil {
		return nil, fmt.Errorf("%s: want a JSON list of {instanceType, zone, capacityType}: %w", path, err)
	}
	out := scheduling.UnavailableOfferings{}
	for i, u := range list {
		if u.InstanceType == "" || u.Zone == "" || u.CapacityType == "" {
			return nil, fmt.Errorf("%s: [%d]: instanceType, zone and capacityType are all required", path, i)
		}
		out[scheduling.OfferingKey{InstanceType: u.InstanceType, Zone: u.Zone, CapacityType: u.CapacityType, ReservationID: u.ReservationID}] = true
	}
	return out, nil
}

// isDaemonOrMirror reports pods the provisioner never provisions for: DaemonSet pods (their overhead is
// counted per node) and static pods.
func isDaemonOrMirror(p *corev1.Pod) bool {
	for _, o := range p.OwnerReferences {
		if o.Kind == "DaemonSet" || o.Kind == "Node" {
			return true
		}
	}
	return p.Annotations[corev1.MirrorPodAnnotationKey] != ""
}

func isFinished(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed || p.DeletionTimestamp != nil
}

// splitPods separates pending pods (unbound, not finished, not daemon or static pods) from the pods
// bound to each node, and warns about pods bound to nodes that are not in nodes.
func splitPods(pods []*corev1.Pod, nodes []*corev1.Node, warn func(string)) (pending []*corev1.Pod, existing []scheduling.ExistingNode) {
	byNode := map[string][]*corev1.Pod{}
	known := map[string]bool{}
	for _, n := range nodes {
		known[n.Name] = true
	}
	missing := map[string]int{}
	for _, p := range pods {
		switch {
		case isFinished(p):
		case p.Spec.NodeName != "" && known[p.Spec.NodeName]:
			byNode[p.Spec.NodeName] = append(byNode[p.Spec.NodeName], p)
		case p.Spec.NodeName != "":
			missing[p.Spec.NodeName]++
		case !isDaemonOrMirror(p):
			pending = append(pending, p)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(missing)) {
		warn(fmt.Sprintf("%d pod(s) bound to node %s, which is not in --nodes: ignored", missing[name], name))
	}
	for _, n := range nodes {
		pool := n.Labels[scheduling.LabelNodePool]
		existing = append(existing, scheduling.ExistingNode{
			Node: n, Pods: byNode[n.Name], NodePool: pool,
			Initialized: pool == "" || n.Labels[scheduling.LabelNodeInitalized] == "true",
		})
	}
	return pending, existing
}
