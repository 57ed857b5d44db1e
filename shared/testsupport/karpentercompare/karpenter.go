package main

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	fakecr "sigs.k8s.io/controller-runtime/pkg/client/fake"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/cloudprovider/fake"
	provsched "sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	"sigs.k8s.io/karpenter/pkg/events"
	"sigs.k8s.io/karpenter/pkg/operator/injection"
	"sigs.k8s.io/karpenter/pkg/operator/options"
)

// concurrentReconciles is the parallelism Karpenter's own scheduling benchmark gives its scheduler.
const concurrentReconciles = 5

// runKarpenter builds Karpenter's scheduler the way its provisioner does for one batch (an empty
// cluster, one NodePool, the catalog, the pending pods), solves, and prices the NodeClaims it
// returns at the offering a launch would take. Setup (topology and scheduler construction) and Solve
// are timed separately.
func runKarpenter(in benchInput, pool *karpv1.NodePool, types []*cloudprovider.InstanceType) (result, error) {
	pods := copyPods(in.Pods)
	ctx := options.ToContext(injection.WithControllerName(context.Background(), "provisioner"), karpenterOptions())
	kubeClient := fakecr.NewFakeClient()
	provider := fake.NewCloudProvider()
	provider.InstanceTypes = types
	clk := clock.RealClock{}
	cluster := state.NewCluster(clk, kubeClient, provider)
	pools := []*karpv1.NodePool{pool}
	byPool := map[string][]*cloudprovider.InstanceType{pool.Name: types}
	opts := []provsched.Options{provsched.NumConcurrentReconciles(concurrentReconciles)}

	start := time.Now()
	topology, err := provsched.NewTopology(ctx, kubeClient, cluster, nil, pools, byPool, pods, opts...)
	if err != nil {
		return result{}, fmt.Errorf("karpenter topology: %w", err)
	}
	s := provsched.NewScheduler(ctx, kubeClient, pools, cluster, nil, topology, byPool, nil,
		events.NewRecorder(&record.FakeRecorder{}), clk, opts...)
	setup := time.Since(start)

	start = time.Now()
	res, err := s.Solve(ctx, pods)
	solve := time.Since(start)
	if err != nil {
		return result{}, fmt.Errorf("karpenter solve: %w", err)
	}
	out := result{Claims: len(res.NewNodeClaims), Setup: setup, Solve: solve, Unschedulable: len(res.PodErrors)}
	for _, nc := range res.NewNodeClaims {
		o, err := launchOffering(nc)
		if err != nil {
			return result{}, err
		}
		out.Cost += o.Price
	}
	return out, nil
}

// karpenterOptions are Karpenter's operator defaults that the scheduler reads: respect preferences,
// strict minValues, reserved capacity enabled, DRA requests ignored.
func karpenterOptions() *options.Options {
	return &options.Options{
		BatchMaxDuration:  10 * time.Second,
		BatchIdleDuration: time.Second,
		PreferencePolicy:  options.PreferencePolicyRespect,
		MinValuesPolicy:   options.MinValuesPolicyStrict,
		IgnoreDRARequests: true,
		FeatureGates:      options.FeatureGates{ReservedCapacity: true},
	}
}
