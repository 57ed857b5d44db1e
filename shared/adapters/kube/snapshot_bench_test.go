package kube

import (
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/nodewright/nodewright/shared/testsupport/kubetest"
)

const (
	benchNodes     = 1000
	benchPods      = 30_000
	benchNamespace = "bench-snapshot"
	seedWorkers    = 48
)

var benchSeed struct {
	once sync.Once
	err  error
	took time.Duration
}

// BenchmarkSnapshot1000Nodes30000Pods times one full snapshot of a cluster with 1000 Nodes and 30,000
// pods bound to them, read through protobuf from the local kube-apiserver. The cluster is seeded once per
// test binary, before timing starts; plain `go test` never runs it.
func BenchmarkSnapshot1000Nodes30000Pods(b *testing.B) {
	cp := kubetest.Shared(b, kubetest.Options{})
	benchSeed.once.Do(func() {
		start := time.Now()
		benchSeed.err = seedCluster(b, cp)
		benchSeed.took = time.Since(start)
	})
	if benchSeed.err != nil {
		b.Fatalf("seeding the cluster: %v", benchSeed.err)
	}
	b.Logf("seeded %d nodes and %d pods in %s", benchNodes, benchPods, benchSeed.took.Round(time.Second))
	client, err := NewClientset(cp.Config)
	if err != nil {
		b.Fatal(err)
	}
	snapshotter := NewSnapshotter(client, SnapshotOptions{})
	ctx := context.Background()

	var peak, live uint64
	var pods, nodes int
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		runtime.GC()
		stop := sampleHeap(&peak)
		b.StartTimer()
		snap, err := snapshotter.Snapshot(ctx)
		b.StopTimer()
		stop()
		if err != nil {
			b.Fatal(err)
		}
		pods, nodes = len(snap.Bound)+len(snap.Pending), len(snap.Nodes)
		runtime.GC()
		live = max(live, heapObjectBytes())
		runtime.KeepAlive(snap)
		b.StartTimer()
	}
	b.StopTimer()
	if nodes < benchNodes || pods < benchPods {
		b.Fatalf("snapshot has %d nodes and %d pods, want at least %d and %d", nodes, pods, benchNodes, benchPods)
	}
	b.ReportMetric(float64(pods), "pods")
	b.ReportMetric(float64(nodes), "nodes")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(live)/(1<<20), "snapshot-heap-MB")
}

// heapObjectBytes is the heap held by objects, live or not yet swept.
func heapObjectBytes() uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	return sample[0].Value.Uint64()
}

// sampleHeap records the largest heap seen every 2 ms until the returned stop is called. It counts
// objects not yet swept, so it includes garbage the collector has not reclaimed: the memory a function
// needs, not only what the snapshot keeps (snapshot-heap-MB, measured after a collection).
func sampleHeap(peak *uint64) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	record := func() { *peak = max(*peak, heapObjectBytes()) }
	go func() {
		defer close(finished)
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			record()
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() {
		close(done)
		<-finished
		record()
	}
}

// seedCluster creates the Nodes and the pods bound to them (spec.nodeName set, so no scheduler is
// needed) with a bounded pool of workers and a client without a rate limit.
func seedCluster(b *testing.B, cp *kubetest.ControlPlane) error {
	cfg := Tuned(cp.Config)
	cfg.QPS, cfg.Burst = -1, 0 // no client-side limit while seeding
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	if _, err := client.CoreV1().Namespaces().Create(ctx,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: benchNamespace}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	if err := parallel(ctx, benchNodes, func(ctx context.Context, i int) error {
		_, err := client.CoreV1().Nodes().Create(ctx, benchNode(i), metav1.CreateOptions{})
		return err
	}); err != nil {
		return fmt.Errorf("creating nodes: %w", err)
	}
	if err := parallel(ctx, benchPods, func(ctx context.Context, i int) error {
		_, err := client.CoreV1().Pods(benchNamespace).Create(ctx, benchPod(i), metav1.CreateOptions{})
		return err
	}); err != nil {
		return fmt.Errorf("creating pods: %w", err)
	}
	return nil
}

// parallel runs fn for 0..n-1 on seedWorkers goroutines and returns the first error.
func parallel(ctx context.Context, n int, fn func(context.Context, int) error) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(seedWorkers)
	for i := range n {
		g.Go(func() error { return fn(ctx, i) })
	}
	return g.Wait()
}

// benchNode looks like a Node an EKS kubelet registers: well-known labels, capacity, conditions,
// addresses, node info and a list of cached images.
func benchNode(i int) *corev1.Node {
	name := fmt.Sprintf("ip-10-%d-%d-%d.ec2.internal", i/250, i%250, 10+i%7)
	capacity := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("16"), corev1.ResourceMemory: resource.MustParse("64Gi"),
		corev1.ResourcePods: resource.MustParse("110"), corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
	}
	now := metav1.Now()
	var conditions []corev1.NodeCondition
	for _, c := range []corev1.NodeConditionType{corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure} {
		conditions = append(conditions, corev1.NodeCondition{Type: c, Status: corev1.ConditionFalse,
			Reason: "KubeletHasSufficient" + string(c), LastHeartbeatTime: now, LastTransitionTime: now})
	}
	conditions = append(conditions, corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
		Reason: "KubeletReady", Message: "kubelet is posting ready status", LastHeartbeatTime: now, LastTransitionTime: now})
	var images []corev1.ContainerImage
	for j := range 12 {
		images = append(images, corev1.ContainerImage{SizeBytes: int64(20_000_000 + j*1_000_000), Names: []string{
			fmt.Sprintf("602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/image-%d@sha256:%064x", j, j),
			fmt.Sprintf("602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/image-%d:v1.%d.0", j, j)}})
	}
	zone := []string{"us-east-1a", "us-east-1b", "us-east-1c"}[i%3]
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			corev1.LabelHostname: name, corev1.LabelOSStable: "linux", corev1.LabelArchStable: "amd64",
			corev1.LabelInstanceTypeStable: "m5.4xlarge", corev1.LabelTopologyZone: zone,
			corev1.LabelTopologyRegion: "us-east-1", "karpenter.sh/nodepool": "default",
			"karpenter.sh/capacity-type": "on-demand", "karpenter.k8s.aws/instance-family": "m5",
			"karpenter.k8s.aws/instance-cpu": "16", "karpenter.k8s.aws/instance-memory": "65536",
			"karpenter.sh/initialized": "true", "karpenter.sh/registered": "true",
		}, Annotations: map[string]string{"alpha.kubernetes.io/provided-node-ip": "10.0.0.1",
			"karpenter.k8s.aws/ec2nodeclass-hash": "12345678901234567890"}},
		Spec: corev1.NodeSpec{ProviderID: fmt.Sprintf("aws:///%s/i-%017x", zone, i)},
		Status: corev1.NodeStatus{
			Capacity: capacity, Allocatable: capacity, Conditions: conditions, Images: images,
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("10.%d.%d.10", i/250, i%250)},
				{Type: corev1.NodeHostName, Address: name}, {Type: corev1.NodeInternalDNS, Address: name}},
			NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.34.4-eks-1234567", OSImage: "Amazon Linux 2023",
				ContainerRuntimeVersion: "containerd://1.7.27", KernelVersion: "6.1.134-152.225.amzn2023.x86_64",
				OperatingSystem: "linux", Architecture: "amd64", MachineID: fmt.Sprintf("%032x", i)},
		},
	}
}

// benchPod looks like a Deployment's pod after scheduling: owner, labels, two containers with requests,
// probes, environment, a projected service-account volume and the default tolerations.
func benchPod(i int) *corev1.Pod {
	app := fmt.Sprintf("app-%d", i%200)
	node := benchNode(i % benchNodes).Name
	req := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("512Mi")}
	probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz",
		Port: intstr.FromInt32(8080)}}, PeriodSeconds: 10, TimeoutSeconds: 1, FailureThreshold: 3}
	seconds, tokenSeconds := int64(300), int64(3607)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:   fmt.Sprintf("%s-7d9f8c6b5-%05d", app, i),
			Labels: map[string]string{"app": app, "pod-template-hash": "7d9f8c6b5", "team": fmt.Sprintf("team-%d", i%17)},
			Annotations: map[string]string{"kubectl.kubernetes.io/restartedAt": "2026-11-01T10:00:00Z",
				"prometheus.io/scrape": "true", "prometheus.io/port": "9090"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet",
				Name: app + "-7d9f8c6b5", UID: "3c2b1a09-8f7e-4d6c-b5a4-938271605f4e", Controller: new(bool)}},
		},
		Spec: corev1.PodSpec{
			NodeName:           node,
			ServiceAccountName: "default",
			Containers: []corev1.Container{
				{Name: "app", Image: "123456789012.dkr.ecr.us-east-1.amazonaws.com/" + app + ":v2.14.3",
					Ports:     []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}, {Name: "metrics", ContainerPort: 9090}},
					Resources: corev1.ResourceRequirements{Requests: req, Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")}},
					Env: []corev1.EnvVar{{Name: "APP_NAME", Value: app}, {Name: "LOG_LEVEL", Value: "info"},
						{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
					ReadinessProbe: probe, LivenessProbe: probe,
					VolumeMounts: []corev1.VolumeMount{{Name: "kube-api-access", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}}},
				{Name: "sidecar", Image: "public.ecr.aws/aws-observability/aws-for-fluent-bit:2.32.2",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"),
						corev1.ResourceMemory: resource.MustParse("64Mi")}}},
			},
			Volumes: []corev1.Volume{{Name: "kube-api-access", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: &tokenSeconds}}}}}}},
			Tolerations: []corev1.Toleration{
				{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &seconds},
				{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &seconds}},
			TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone,
				WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}},
		},
	}
}
