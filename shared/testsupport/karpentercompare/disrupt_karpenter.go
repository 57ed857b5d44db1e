package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider/fake"
	"sigs.k8s.io/karpenter/pkg/controllers/disruption"
	"sigs.k8s.io/karpenter/pkg/controllers/provisioning"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	"sigs.k8s.io/karpenter/pkg/controllers/state/informer"
	"sigs.k8s.io/karpenter/pkg/events"
	"sigs.k8s.io/karpenter/pkg/operator/injection"
	"sigs.k8s.io/karpenter/pkg/operator/options"
)

// Karpenter's disruption controller polls every 10 s when it decides nothing; between passes that
// executed commands the clock moves a minute (nominations of the replacements expire).
const (
	pollStep    = 10 * time.Second
	commandStep = time.Minute
)

// consolidationTimeouts is Karpenter's count of consolidation searches cut short by their timeout
// (multi-node after a minute, single-node after three), from its metrics registry.
func consolidationTimeouts() float64 {
	families, err := crmetrics.Registry.Gather()
	if err != nil {
		return 0
	}
	total := 0.0
	for _, f := range families {
		if f.GetName() != "karpenter_voluntary_disruption_consolidation_timeouts_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			total += m.GetCounter().GetValue()
		}
	}
	return total
}

// disruptOptions are the comparison's settings for both sides.
type disruptOptions struct {
	SpotToSpot bool
	// Cap bounds a Karpenter run's wall time; a run still deciding then is reported so.
	Cap time.Duration
}

// karpenterOutcome is one run of Karpenter's disruption controller to its fixed point.
type karpenterOutcome struct {
	CostBefore, CostAfter float64
	Commands, Disrupted   int
	Launched              int
	// Unplaced counts pods of disrupted nodes that Karpenter's simulation placed nowhere.
	Unplaced int
	// Decision is the wall time inside Karpenter's reconciles (the disruption controller and its
	// orchestration queue); the fake waits take none. Total is the run's wall time after loading.
	Decision, Total, Load time.Duration
	Passes                int
	// Timeouts counts passes in which a consolidation search hit Karpenter's timeout.
	Timeouts      int
	StillDeciding bool
	// Left are the NodePool nodes at the fixed point.
	Left map[string]leftNode
}

// leftNode is a NodePool node at the fixed point: its offering and the price counted for it.
type leftNode struct {
	InstanceType, Zone, CapacityType string
	Price                            float64
}

// karpenterSide is Karpenter's disruption machinery over an API server holding one case.
type karpenterSide struct {
	in       *disruptCase
	kube     client.Client
	clk      *skipClock
	provider *fake.CloudProvider
	cluster  *state.Cluster
	nodes    *informer.NodeController
	claims   *informer.NodeClaimController
	pods     *informer.PodController
	queue    *disruption.Queue
	ctrl     *disruption.Controller
	progress io.Writer
	out      karpenterOutcome
}

// runKarpenterDisruption loads the case into a fresh API server and runs Karpenter's disruption
// controller on it until a pass decides nothing (or opts.Cap).
func runKarpenterDisruption(in *disruptCase, opts disruptOptions, progress io.Writer) (karpenterOutcome, error) {
	api, err := startAPIServer()
	if err != nil {
		return karpenterOutcome{}, err
	}
	defer func() { _ = api.stop() }()
	ctx := options.ToContext(injection.WithControllerName(context.Background(), "disruption"), disruptionOptions(opts.SpotToSpot))
	k, err := newKarpenterSide(ctx, api.kube, in, progress)
	if err != nil {
		return karpenterOutcome{}, err
	}
	if err := k.run(ctx, opts.Cap); err != nil {
		return karpenterOutcome{}, err
	}
	return k.out, nil
}

// disruptionOptions are karpenterOptions with the spot-to-spot consolidation feature gate as asked.
func disruptionOptions(spotToSpot bool) *options.Options {
	o := karpenterOptions()
	o.FeatureGates.SpotToSpotConsolidation = spotToSpot
	return o
}

func newKarpenterSide(ctx context.Context, kube client.Client, in *disruptCase, progress io.Writer) (*karpenterSide, error) {
	start := time.Now()
	if err := loadCluster(ctx, kube, in); err != nil {
		return nil, err
	}
	provider := fake.NewCloudProvider()
	for pool, types := range in.Types {
		kts, err := toKarpenterInstanceTypes(types)
		if err != nil {
			return nil, err
		}
		provider.InstanceTypesForNodePool[pool] = kts
	}
	clk := &skipClock{}
	cluster := state.NewCluster(clk, kube, provider)
	fakeRecorder := &record.FakeRecorder{}
	if os.Getenv("KC_DEBUG") != "" {
		// Karpenter's events (why a node is not consolidatable...) to the progress stream.
		fakeRecorder.Events = make(chan string, 1024)
		go func() {
			for e := range fakeRecorder.Events {
				fmt.Fprintln(progress, "  karpenter event:", e)
			}
		}()
	}
	recorder := events.NewRecorder(fakeRecorder)
	prov := provisioning.NewProvisioner(kube, recorder, provider, cluster, clk)
	queue := disruption.NewQueue(kube, recorder, cluster, clk, prov)
	k := &karpenterSide{
		in: in, kube: kube, clk: clk, provider: provider, cluster: cluster,
		nodes: informer.NewNodeController(kube, cluster), claims: informer.NewNodeClaimController(kube, provider, cluster),
		pods: informer.NewPodController(kube, cluster), queue: queue,
		ctrl:     disruption.NewController(clk, kube, prov, provider, recorder, cluster, queue),
		progress: progress,
	}
	if err := k.syncState(ctx); err != nil {
		return nil, err
	}
	k.out.Load = time.Since(start)
	nodes, err := k.listNodes(ctx)
	if err != nil {
		return nil, err
	}
	k.out.CostBefore = in.costOf(nodes)
	return k, nil
}

// syncState feeds every object to Karpenter's cluster state, as its informers do on start.
func (k *karpenterSide) syncState(ctx context.Context) error {
	pools := &karpv1.NodePoolList{}
	if err := k.kube.List(ctx, pools); err != nil {
		return err
	}
	poolCtl := informer.NewNodePoolController(k.kube, k.provider, k.cluster)
	for i := range pools.Items {
		if _, err := poolCtl.Reconcile(ctx, &pools.Items[i]); err != nil {
			return err
		}
	}
	daemonSets := informer.NewDaemonSetController(k.kube, k.cluster)
	for _, ds := range k.in.DaemonSets {
		ns := ds.Namespace
		if ns == "" {
			ns = "default"
		}
		if _, err := daemonSets.Reconcile(ctx, request(ns, ds.Name)); err != nil {
			return err
		}
	}
	claims := &karpv1.NodeClaimList{}
	if err := k.kube.List(ctx, claims); err != nil {
		return err
	}
	for _, nc := range claims.Items {
		if err := k.reconcile(ctx, k.claims, "", nc.Name); err != nil {
			return err
		}
	}
	nodes, err := k.listNodes(ctx)
	if err != nil {
		return err
	}
	for _, n := range nodes {
		if err := k.reconcile(ctx, k.nodes, "", n.Name); err != nil {
			return err
		}
	}
	pods := &corev1.PodList{}
	if err := k.kube.List(ctx, pods); err != nil {
		return err
	}
	return parallel(ctx, len(pods.Items), func(i int) error {
		return k.reconcile(ctx, k.pods, pods.Items[i].Namespace, pods.Items[i].Name)
	})
}

func request(namespace, name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: namespace, Name: name}}
}

// reconcile runs one of Karpenter's state informers on an object.
func (k *karpenterSide) reconcile(ctx context.Context, r reconcile.Reconciler, namespace, name string) error {
	if _, err := r.Reconcile(ctx, request(namespace, name)); err != nil {
		return fmt.Errorf("karpenter state of %s/%s: %w", namespace, name, err)
	}
	return nil
}

func (k *karpenterSide) listNodes(ctx context.Context) ([]*corev1.Node, error) {
	list := &corev1.NodeList{}
	if err := k.kube.List(ctx, list); err != nil {
		return nil, err
	}
	out := make([]*corev1.Node, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out, nil
}

// run reconciles the disruption controller, executes the commands it starts as a cluster would, and
// moves the clock, until two passes in a row decide nothing without a search cut short by its
// timeout, or capacity runs out of time.
func (k *karpenterSide) run(ctx context.Context, capacity time.Duration) error {
	start := time.Now()
	quietPasses := 0
	for quietPasses < 2 {
		if capacity > 0 && time.Since(start) > capacity {
			k.out.StillDeciding = true
			break
		}
		k.out.Passes++
		timeouts := consolidationTimeouts()
		t := time.Now()
		if _, err := k.ctrl.Reconcile(ctx); err != nil {
			return fmt.Errorf("karpenter disruption pass %d: %w", k.out.Passes, err)
		}
		k.out.Decision += time.Since(t)
		timedOut := consolidationTimeouts() > timeouts
		if timedOut {
			k.out.Timeouts++
		}
		cmds := k.queue.GetCommands()
		if len(cmds) == 0 {
			if !k.cluster.Synced(ctx) {
				// The controller waits for its state before deciding: a quiet pass then is no answer.
				return fmt.Errorf("karpenter disruption pass %d: cluster state not synced with the API server", k.out.Passes)
			}
			if timedOut {
				quietPasses = 0 // cut short, not an answer: the next pass goes on
			} else {
				quietPasses++
			}
			k.clk.Step(pollStep)
			k.reportPass(ctx, start, timedOut)
			continue
		}
		quietPasses = 0
		for _, cmd := range cmds {
			if err := k.execute(ctx, cmd); err != nil {
				return err
			}
		}
		k.clk.Step(commandStep)
		k.reportPass(ctx, start, timedOut)
	}
	k.out.Total = time.Since(start)
	nodes, err := k.listNodes(ctx)
	if err != nil {
		return err
	}
	k.out.Left = map[string]leftNode{}
	for _, n := range nodes {
		if k.in.ours(n) {
			k.out.Left[n.Name] = leftNode{
				InstanceType: n.Labels[corev1.LabelInstanceTypeStable], Zone: n.Labels[corev1.LabelTopologyZone],
				CapacityType: n.Labels[karpv1.CapacityTypeLabelKey], Price: k.in.nodePrice(n),
			}
		}
	}
	k.out.CostAfter = k.in.costOf(nodes)
	return nil
}

// reportPass writes a pass's outcome to the progress stream: how long the run has gone, whether a search
// was cut short, and the NodePool nodes' cost now, so that a run stopped by the cap still shows the way
// its cost went.
func (k *karpenterSide) reportPass(ctx context.Context, start time.Time, timedOut bool) {
	nodes, err := k.listNodes(ctx)
	if err != nil {
		fmt.Fprintf(k.progress, "  karpenter pass %d: %v\n", k.out.Passes, err)
		return
	}
	fmt.Fprintf(k.progress, "  karpenter pass %d after %s: %d commands so far, cut by a timeout: %t, $%.4f/h\n",
		k.out.Passes, time.Since(start).Round(time.Second), k.out.Commands, timedOut, k.in.costOf(nodes))
}
