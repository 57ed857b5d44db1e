package scalebench

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// imageRef is a container image as a registry names it.
type imageRef struct{ repo, tag, digest string }

// imageOf is the image of container c of workload w (0: the main container, then the sidecars):
// the same for every pod of the workload.
func imageOf(w Workload, c int) imageRef {
	r := rand.New(rand.NewPCG(uint64(w.Index)<<4|uint64(c), 0x1a9e))
	if w.Kind == "DaemonSet" {
		repos := map[string][]string{
			"aws-node":     {"602401143452.dkr.ecr.us-east-1.amazonaws.com/amazon-k8s-cni", "602401143452.dkr.ecr.us-east-1.amazonaws.com/amazon/aws-network-policy-agent"},
			"kube-proxy":   {"602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/kube-proxy"},
			"ebs-csi-node": {"602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/aws-ebs-csi-driver", "602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/csi-node-driver-registrar", "602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/livenessprobe"},
		}[w.Name]
		return imageRef{repo: repos[c%len(repos)], tag: fmt.Sprintf("v1.%d.%d-eksbuild.1", 10+r.IntN(20), r.IntN(9)), digest: hexString(r, 64)}
	}
	if c == 0 {
		return imageRef{repo: "123456789012.dkr.ecr.us-east-1.amazonaws.com/" + w.Namespace + "/" + w.Name,
			tag: fmt.Sprintf("release-2026.%02d.%02d-%s", 1+r.IntN(11), 1+r.IntN(28), hexString(r, 7)), digest: hexString(r, 64)}
	}
	side := []string{"public.ecr.aws/appmesh/aws-appmesh-envoy", "public.ecr.aws/aws-observability/aws-for-fluent-bit", "docker.io/datadog/agent"}
	return imageRef{repo: side[(c-1+w.Index)%len(side)], tag: fmt.Sprintf("v1.%d.%d", 20+r.IntN(10), r.IntN(10)), digest: hexString(r, 64)}
}

// PodName is the name of pod pp.
func (p *Plan) PodName(pp PodPlan) string {
	w := p.workload(pp)
	r := rand.New(rand.NewPCG(p.Seed^uint64(w.Index)<<20, uint64(pp.Ordinal)))
	switch w.Kind {
	case "StatefulSet":
		return w.Name + "-" + strconv.Itoa(pp.Ordinal)
	case "DaemonSet":
		return w.Name + "-" + randomString(r, 5)
	}
	return w.Name + "-" + w.TemplateHash + "-" + randomString(r, 5)
}

func (p *Plan) workload(pp PodPlan) Workload {
	if pp.DaemonSet {
		return p.DaemonSets[pp.Workload]
	}
	return p.Workloads[pp.Workload]
}

// WorkloadLabels are the labels every pod of w carries (its PDB selects them).
func WorkloadLabels(w Workload) map[string]string {
	l := map[string]string{"app.kubernetes.io/name": w.Name, "app.kubernetes.io/instance": w.Name + "-" + w.Namespace}
	if w.Kind == "DaemonSet" {
		l = map[string]string{"k8s-app": w.Name}
	}
	return l
}

// Pod renders pod pp: bound to its node's Node (nodeName, given since the node's name is the instance's
// DNS name) and Running unless pp.Node < 0, in which case it is Pending and marked Unschedulable.
func (p *Plan) Pod(pp PodPlan, nodeName, hostIP string) *corev1.Pod {
	w := p.workload(pp)
	r := rand.New(rand.NewPCG(p.Seed^uint64(w.Index)<<20^0x90d, uint64(pp.Ordinal)))
	name := p.PodName(pp)
	age := time.Duration(1+r.IntN(7*24*60)) * time.Minute
	if pp.Node >= 0 && age > p.Nodes[pp.Node].Age {
		age = p.Nodes[pp.Node].Age - time.Minute
	}
	if pp.Node < 0 {
		age = time.Duration(5+r.IntN(60)) * time.Second
	}
	created := p.Now.Add(-age).Truncate(time.Second)
	labels := WorkloadLabels(w)
	labels["app.kubernetes.io/version"] = imageOf(w, 0).tag
	labels["app.kubernetes.io/part-of"] = w.Namespace
	labels["app.kubernetes.io/managed-by"] = "Helm"
	labels["team"] = w.Namespace
	annotations := map[string]string{
		"kubectl.kubernetes.io/restartedAt": p.Now.Add(-30 * 24 * time.Hour).Format(time.RFC3339),
		"checksum/config":                   hexString(r, 64),
		"prometheus.io/scrape":              "true", "prometheus.io/port": "9090",
	}
	owner := metav1.OwnerReference{APIVersion: "apps/v1", Kind: w.Kind, Name: w.Name, UID: types.UID(w.UID),
		Controller: ptr(true), BlockOwnerDeletion: ptr(true)}
	switch w.Kind {
	case "ReplicaSet":
		owner.Name = w.Name + "-" + w.TemplateHash
		labels["pod-template-hash"] = w.TemplateHash
	case "StatefulSet":
		labels["apps.kubernetes.io/pod-index"] = strconv.Itoa(pp.Ordinal)
		labels["statefulset.kubernetes.io/pod-name"] = name
		labels["controller-revision-hash"] = w.Name + "-" + w.TemplateHash
	case "DaemonSet":
		labels["controller-revision-hash"] = w.TemplateHash
		labels["pod-template-generation"] = "3"
		delete(annotations, "checksum/config")
	}
	if w.DoNotDisrupt {
		annotations["karpenter.sh/do-not-disrupt"] = "true"
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.Namespace, UID: types.UID(uid(r)), Labels: labels, Annotations: annotations,
			OwnerReferences: []metav1.OwnerReference{owner}, CreationTimestamp: metav1.NewTime(created), Generation: 1},
		Spec: p.podSpec(r, w, pp, name, nodeName),
	}
	if w.Kind != "StatefulSet" {
		pod.GenerateName = name[:len(name)-5]
	}
	if pp.Node >= 0 {
		pod.Status = podStatus(r, pod, created, hostIP)
	} else {
		pod.Status = corev1.PodStatus{Phase: corev1.PodPending, QOSClass: corev1.PodQOSBurstable, Conditions: []corev1.PodCondition{{
			Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
			Message:            "0/" + strconv.Itoa(p.Tier.Nodes) + " nodes are available: 1 node(s) had untolerated taint, " + strconv.Itoa(p.Tier.Nodes-1) + " Insufficient cpu. preemption: 0/" + strconv.Itoa(p.Tier.Nodes) + " nodes are available: " + strconv.Itoa(p.Tier.Nodes) + " No preemption victims found for incoming pod.",
			LastTransitionTime: metav1.NewTime(created.Add(time.Second))}}}
	}
	pod.ManagedFields = podManagedFields(pod, created)
	return pod
}

func (p *Plan) podSpec(r *rand.Rand, w Workload, pp PodPlan, name, nodeName string) corev1.PodSpec {
	token := "kube-api-access-" + randomString(r, 5)
	volumes := []corev1.Volume{{Name: token, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		DefaultMode: ptr(int32(420)), Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr(int64(3607))}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace",
				FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
		}}}},
		{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: w.Name + "-config"}, DefaultMode: ptr(int32(420))}}},
		{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}
	if w.Volume {
		volumes = append(volumes, corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-" + name}}})
	}
	mounts := []corev1.VolumeMount{{Name: token, ReadOnly: true, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"},
		{Name: "config", MountPath: "/etc/" + w.Name, ReadOnly: true}, {Name: "tmp", MountPath: "/tmp"}}
	if w.Volume {
		mounts = append(mounts, corev1.VolumeMount{Name: "data", MountPath: "/var/lib/" + w.Name})
	}
	var containers []corev1.Container
	for c := 0; c <= w.Sidecars; c++ {
		cpu, mem := w.MilliCPU, w.MemMiB
		cname := w.Name
		// The workload's requests are the pod's: a sidecar takes a fifth, the main container the rest.
		if c > 0 {
			cpu, mem = max(1, w.MilliCPU/5), max(1, w.MemMiB/5)
			cname = []string{"envoy", "log-router", "datadog-agent"}[(c-1+w.Index)%3]
		} else if w.Sidecars > 0 {
			cpu, mem = cpu-int64(w.Sidecars)*max(1, w.MilliCPU/5), mem-int64(w.Sidecars)*max(1, w.MemMiB/5)
		}
		if w.Kind == "DaemonSet" {
			cname = []string{"aws-node", "kube-proxy", "ebs-plugin"}[w.Index]
			if c > 0 {
				cname = []string{"aws-eks-nodeagent", "node-driver-registrar", "liveness-probe"}[(w.Index+c)%3]
			}
		}
		img := imageOf(w, c)
		mounts, liveness := mounts, probe("/healthz", 8080+c, 10)
		if c > 0 || w.Index%2 == 1 { // sidecars, and half the applications, are only probed for readiness
			liveness = nil
		}
		if c > 0 { // a sidecar mounts the token only
			mounts = mounts[:1]
		}
		containers = append(containers, corev1.Container{Name: cname, Image: img.repo + ":" + img.tag,
			Ports: ports(c),
			Env:   env(r, w, c), EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: w.Name + "-env"}}}},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: *resource.NewMilliQuantity(cpu, resource.DecimalSI), corev1.ResourceMemory: *resource.NewQuantity(mem<<20, resource.BinarySI)},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: *resource.NewQuantity(2*mem<<20, resource.BinarySI)}},
			VolumeMounts: mounts, LivenessProbe: liveness, ReadinessProbe: probe("/ready", 8080+c, 5),
			TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile,
			ImagePullPolicy: corev1.PullIfNotPresent,
			SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}})
	}
	initImg := imageOf(w, 0)
	spec := corev1.PodSpec{
		Volumes: volumes, Containers: containers, NodeName: nodeName,
		InitContainers: []corev1.Container{{Name: "init-config", Image: initImg.repo + ":" + initImg.tag, Command: []string{"/bin/init", "--config", "/etc/" + w.Name},
			Resources:    corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")}},
			VolumeMounts: mounts[:1], TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile, ImagePullPolicy: corev1.PullIfNotPresent}},
		RestartPolicy: corev1.RestartPolicyAlways, TerminationGracePeriodSeconds: ptr(int64(30)), DNSPolicy: corev1.DNSClusterFirst,
		ServiceAccountName: w.ServiceAccountName, DeprecatedServiceAccount: w.ServiceAccountName, SecurityContext: &corev1.PodSecurityContext{FSGroup: ptr(int64(10001))},
		SchedulerName: corev1.DefaultSchedulerName, PriorityClassName: w.PriorityClassName, EnableServiceLinks: ptr(true),
		PreemptionPolicy: ptr(corev1.PreemptLowerPriority),
		Tolerations: []corev1.Toleration{
			{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr(int64(300))},
			{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr(int64(300))}},
	}
	if w.Kind == "DaemonSet" {
		spec.Tolerations = append(spec.Tolerations, corev1.Toleration{Operator: corev1.TolerationOpExists})
		spec.PriorityClassName, spec.Priority = "system-node-critical", ptr(int32(2000001000))
		spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{nodeName}}}}}}}}
		spec.HostNetwork = w.Name != "ebs-csi-node"
	} else {
		spec.Priority = ptr(int32(0))
		if w.PriorityClassName != "" {
			spec.Priority = ptr(int32(100000))
		}
		spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/arch", Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}}}}}}}}
	}
	if w.TopologySpread {
		spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone,
			WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: &metav1.LabelSelector{MatchLabels: WorkloadLabels(w)}}}
	}
	if w.Kind == "StatefulSet" {
		spec.Hostname, spec.Subdomain = name, w.Name
	}
	return spec
}

// env is a container's environment: plain values, downward-API fields and secret references.
func env(r *rand.Rand, w Workload, c int) []corev1.EnvVar {
	field := func(name, path string) corev1.EnvVar {
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: path}}}
	}
	if c > 0 {
		return []corev1.EnvVar{field("POD_NAME", "metadata.name"), field("NODE_NAME", "spec.nodeName")}
	}
	out := []corev1.EnvVar{field("POD_NAME", "metadata.name"), field("POD_NAMESPACE", "metadata.namespace"),
		{Name: "AWS_REGION", Value: "us-east-1"},
		{Name: "DB_PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: w.Name + "-db"}, Key: "password"}}},
		{Name: "OTEL_EXPORTER_OTLP_ENDPOINT", Value: "http://otel-collector.observability.svc.cluster.local:4317"},
	}
	for i := 0; i < r.IntN(4); i++ {
		out = append(out, corev1.EnvVar{Name: fmt.Sprintf("FEATURE_%s_%d", []string{"CACHE", "RETRY", "TIMEOUT", "BATCH", "POOL", "FLAG"}[i%6], i),
			Value: hexString(r, 4+r.IntN(24))})
	}
	return out
}

// ports are a container's: the main one serves traffic and metrics, a sidecar its admin port.
func ports(c int) []corev1.ContainerPort {
	if c > 0 {
		return []corev1.ContainerPort{{Name: "admin-" + strconv.Itoa(c), ContainerPort: int32(9900 + c), Protocol: corev1.ProtocolTCP}}
	}
	return []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}, {Name: "metrics", ContainerPort: 9090, Protocol: corev1.ProtocolTCP}}
}

func probe(path string, port, period int) *corev1.Probe {
	return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromInt32(int32(port)), Scheme: corev1.URISchemeHTTP}},
		InitialDelaySeconds: 10, TimeoutSeconds: 2, PeriodSeconds: int32(period), SuccessThreshold: 1, FailureThreshold: 3}
}

// podStatus is a Running pod's status as the kubelet reports it.
func podStatus(r *rand.Rand, pod *corev1.Pod, created time.Time, hostIP string) corev1.PodStatus {
	start := metav1.NewTime(created.Add(2 * time.Second))
	ready := metav1.NewTime(created.Add(time.Duration(15+r.IntN(60)) * time.Second))
	ip := fmt.Sprintf("10.0.%d.%d", 128+r.IntN(120), 1+r.IntN(254))
	if pod.Spec.HostNetwork {
		ip = hostIP
	}
	st := corev1.PodStatus{Phase: corev1.PodRunning, HostIP: hostIP, HostIPs: []corev1.HostIP{{IP: hostIP}}, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}},
		StartTime: &start, QOSClass: corev1.PodQOSBurstable}
	for _, t := range []corev1.PodConditionType{"PodReadyToStartContainers", corev1.PodInitialized, corev1.PodReady, corev1.ContainersReady, corev1.PodScheduled} {
		at := ready
		if t == corev1.PodScheduled || t == "PodReadyToStartContainers" {
			at = start
		}
		st.Conditions = append(st.Conditions, corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: at})
	}
	for _, c := range pod.Spec.InitContainers {
		st.InitContainerStatuses = append(st.InitContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image,
			ImageID: imageDigest(c.Image, r), ContainerID: "containerd://" + hexString(r, 64), Ready: true, Started: ptr(false),
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed",
				StartedAt: start, FinishedAt: metav1.NewTime(start.Add(3 * time.Second)), ContainerID: "containerd://" + hexString(r, 64)}},
			VolumeMounts: statusMounts(c)})
	}
	for _, c := range pod.Spec.Containers {
		restarts := int32(0)
		if r.IntN(10) == 0 {
			restarts = int32(1 + r.IntN(5))
		}
		cs := corev1.ContainerStatus{Name: c.Name, Image: c.Image, ImageID: imageDigest(c.Image, r), ContainerID: "containerd://" + hexString(r, 64),
			Ready: true, Started: ptr(true), RestartCount: restarts, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: ready}},
			VolumeMounts: statusMounts(c), Resources: &c.Resources, AllocatedResources: c.Resources.Requests}
		if restarts > 0 {
			cs.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled",
				StartedAt: start, FinishedAt: ready, ContainerID: "containerd://" + hexString(r, 64)}}
		}
		st.ContainerStatuses = append(st.ContainerStatuses, cs)
	}
	return st
}

func imageDigest(image string, r *rand.Rand) string {
	for i := len(image) - 1; i >= 0; i-- {
		if image[i] == ':' {
			return image[:i] + "@sha256:" + hexString(r, 64)
		}
	}
	return image
}

func statusMounts(c corev1.Container) []corev1.VolumeMountStatus {
	out := make([]corev1.VolumeMountStatus, len(c.VolumeMounts))
	for i, m := range c.VolumeMounts {
		out[i] = corev1.VolumeMountStatus{Name: m.Name, MountPath: m.MountPath, ReadOnly: m.ReadOnly}
		if m.ReadOnly {
			out[i].RecursiveReadOnly = ptr(corev1.RecursiveReadOnlyDisabled)
		}
	}
	return out
}

// podManagedFields are a pod's managers: its controller, owning every field it created the pod with
// (metadata and spec), and the kubelet, owning the status it posts — as the API server records them.
func podManagedFields(pod *corev1.Pod, created time.Time) []metav1.ManagedFieldsEntry {
	meta := struct {
		GenerateName    string                  `json:"generateName,omitempty"`
		Labels          map[string]string       `json:"labels,omitempty"`
		Annotations     map[string]string       `json:"annotations,omitempty"`
		OwnerReferences []metav1.OwnerReference `json:"ownerReferences,omitempty"`
	}{pod.GenerateName, pod.Labels, pod.Annotations, pod.OwnerReferences}
	spec := fieldSet{"f:metadata": fieldsOfObject(meta), "f:spec": fieldsOfObject(pod.Spec)}
	entries := []metav1.ManagedFieldsEntry{entry(managerController, metav1.ManagedFieldsOperationUpdate, "", created, spec)}
	if pod.Spec.NodeName == "" {
		return append(entries, entry("kube-scheduler", metav1.ManagedFieldsOperationUpdate, "status", created.Add(time.Second),
			fieldSet{"f:status": fieldsOfObject(pod.Status)}))
	}
	return append(entries, entry(managerKubelet, metav1.ManagedFieldsOperationUpdate, "status", created.Add(20*time.Second),
		fieldSet{"f:status": fieldsOfObject(pod.Status)}))
}

func ptr[T any](v T) *T { return &v }
