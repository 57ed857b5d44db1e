package kube

import (
	"sort"
	"strings"
	"unique"

	corev1 "k8s.io/api/core/v1"
)

// maxInterned bounds an interner: past it, new contents are kept as they are (not shared).
const maxInterned = 100_000

// interner shares equal label maps and resource lists between the pods of a view: the pods of one
// ReplicaSet carry the same labels and requests, so 150,000 pods hold a few thousand distinct maps. The
// shared maps are read-only, as every object of a view is.
type interner struct {
	labels    map[string]map[string]string
	resources map[string]corev1.ResourceList
	buf       strings.Builder
}

func newInterner() *interner {
	return &interner{labels: map[string]map[string]string{}, resources: map[string]corev1.ResourceList{}}
}

func (in *interner) labelMap(m map[string]string) map[string]string {
	if len(m) == 0 || in == nil {
		return m
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	in.buf.Reset()
	for _, k := range keys {
		in.buf.WriteString(k)
		in.buf.WriteByte(0)
		in.buf.WriteString(m[k])
		in.buf.WriteByte(0)
	}
	key := in.buf.String()
	if shared, ok := in.labels[key]; ok {
		return shared
	}
	if len(in.labels) < maxInterned {
		in.labels[key] = m
	}
	return m
}

func (in *interner) resourceList(l corev1.ResourceList) corev1.ResourceList {
	if len(l) == 0 || in == nil {
		return l
	}
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, string(k))
	}
	sort.Strings(keys)
	in.buf.Reset()
	for _, k := range keys {
		q := l[corev1.ResourceName(k)]
		in.buf.WriteString(k)
		in.buf.WriteByte(0)
		in.buf.WriteString(q.String())
		in.buf.WriteByte(0)
	}
	key := in.buf.String()
	if shared, ok := in.resources[key]; ok {
		return shared
	}
	if len(in.resources) < maxInterned {
		in.resources[key] = l
	}
	return l
}

// pod shares p's labels, annotations, requests and common strings with equal ones seen before.
func (in *interner) pod(p *corev1.Pod) {
	p.Labels = in.labelMap(p.Labels)
	p.Annotations = in.labelMap(p.Annotations)
	p.Namespace, p.GenerateName = str(p.Namespace), str(p.GenerateName)
	for i := range p.OwnerReferences {
		o := &p.OwnerReferences[i]
		o.APIVersion, o.Kind, o.Name = str(o.APIVersion), str(o.Kind), str(o.Name)
	}
	s := &p.Spec
	s.NodeName, s.ServiceAccountName, s.SchedulerName = str(s.NodeName), str(s.ServiceAccountName), str(s.SchedulerName)
	s.PriorityClassName = str(s.PriorityClassName)
	s.NodeSelector = in.labelMap(s.NodeSelector)
	for _, cs := range [][]corev1.Container{s.InitContainers, s.Containers} {
		for i := range cs {
			c := &cs[i]
			c.Name, c.Image = str(c.Name), str(c.Image)
			c.Resources.Requests = in.resourceList(c.Resources.Requests)
		}
	}
	for i := range s.Tolerations {
		t := &s.Tolerations[i]
		t.Key, t.Value = str(t.Key), str(t.Value)
	}
}

// str returns the canonical copy of s: equal strings of many pods share one allocation.
func str(s string) string {
	if s == "" {
		return s
	}
	return unique.Make(s).Value()
}
