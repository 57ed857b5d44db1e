package scalebench

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/flows/provisioning"
	"github.com/nodewright/nodewright/shared/flows/termination"
)

// GatedDrains is how many other drains wait for their replacements in the termination scenario.
const GatedDrains = 20

// terminationScenario: one drain step (one termination-queue message) on node 0, which runs
// TerminationNodePods pods, while GatedDrains other claims are draining and wait for replacements that
// have not initialized. Node 0's claim is draining, and a provisioning run has finished since (the
// replacement mark), so the step taints and evicts. After each repetition node 0 is put back: claim in
// service, taint lifted, evicted pods re-created, PodDisruptionBudgets' status reset.
type terminationScenario struct {
	world
	gated        []string
	replacements []string
}

func (s *terminationScenario) Arrange(ctx context.Context, rep int) (Payload, error) {
	plan := s.l.Plan
	if rep == 0 {
		if err := s.gate(ctx); err != nil {
			return Payload{}, err
		}
	}
	claim := plan.Nodes[0].Claim
	if _, err := s.env.Store.UpdateClaim(ctx, claim, func(c *state.Claim) error {
		c.Lifecycle, c.DisruptionReason = state.Draining, "Underutilized"
		return nil
	}); err != nil {
		return Payload{}, fmt.Errorf("draining claim %s: %w", claim, err)
	}
	if err := s.env.Store.AdvanceMark(ctx, provisioning.SnapshotMark, time.Now().Add(time.Second)); err != nil {
		return Payload{}, err
	}
	body, err := termination.Request{Claim: claim, Reason: "Underutilized", RequestedAt: time.Now().UTC(), Attempt: 1}.Body()
	return Payload{Messages: []string{body}}, err
}

// gate moves GatedDrains claims (nodes 1..GatedDrains) to draining, each with a launched replacement
// claim that replaces it and has not initialized.
func (s *terminationScenario) gate(ctx context.Context) error {
	plan := s.l.Plan
	var reps []state.Claim
	for i := 1; i <= GatedDrains; i++ {
		np := plan.Nodes[i]
		if _, err := s.env.Store.UpdateClaim(ctx, np.Claim, func(c *state.Claim) error {
			c.Lifecycle, c.DisruptionReason = state.Draining, "Underutilized"
			return nil
		}); err != nil {
			return fmt.Errorf("draining claim %s: %w", np.Claim, err)
		}
		s.gated = append(s.gated, np.Claim)
		repl := np
		repl.Claim = np.NodePool + "-r" + np.Claim[len(np.NodePool)+1:]
		// The replacement is being launched: recorded, EC2 not answered yet.
		c := plan.claimOf(repl, s.l.Instances[i], state.Launched, s.l.h, s.l.prices)
		c.Lifecycle, c.InstanceID, c.ProviderID, c.LaunchedAt = state.Pending, "", "", nil
		c.Replaces, c.CreatedAt = []string{np.Claim}, time.Now().UTC()
		reps = append(reps, c)
		s.replacements = append(s.replacements, c.Name)
	}
	return createClaims(ctx, s.env.Store, reps)
}

func (s *terminationScenario) Tidy(ctx context.Context, rep int) error {
	plan := s.l.Plan
	if err := s.backInService(ctx, plan.Nodes[0].Claim); err != nil {
		return err
	}
	if err := s.liftTaints(ctx, disruptedTaintKey); err != nil {
		return err
	}
	if err := s.restorePods(ctx, 0); err != nil {
		return err
	}
	return s.purge(ctx, s.env.Queues.Termination)
}

// Finish puts the gated claims back in service and retires their replacements.
func (s *terminationScenario) Finish(ctx context.Context) error {
	for _, c := range s.gated {
		if err := s.backInService(ctx, c); err != nil {
			return err
		}
	}
	_, err := s.retireNewClaims(ctx, nil)
	return err
}

// restorePods re-creates node n's pods that a drain evicted (force-deleting those left terminating: no
// kubelet confirms their end) and resets the status of their PodDisruptionBudgets.
func (w world) restorePods(ctx context.Context, n int) error {
	plan := w.l.Plan
	inst := w.l.Instances[n]
	pdbs := map[int]bool{}
	zero := int64(0)
	idx := plan.PodsOn(n)
	err := parallel(ctx, len(idx), writers, func(ctx context.Context, i int) error {
		pp := plan.Pods[idx[i]]
		want := plan.Pod(pp, inst.PrivateDNS, inst.PrivateIP)
		pods := w.env.Client.CoreV1().Pods(want.Namespace)
		got, err := pods.Get(ctx, want.Name, metav1.GetOptions{})
		switch {
		case err == nil && got.DeletionTimestamp == nil:
			return nil
		case err == nil:
			if err := pods.Delete(ctx, want.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
		case !apierrors.IsNotFound(err):
			return err
		}
		return writePod(ctx, w.env.Client, want)
	})
	if err != nil {
		return fmt.Errorf("restoring node %d's pods: %w", n, err)
	}
	for _, i := range idx {
		if pp := plan.Pods[i]; !pp.DaemonSet && plan.Workloads[pp.Workload].PDB {
			pdbs[pp.Workload] = true
		}
	}
	for wi := range pdbs {
		wl := plan.Workloads[wi]
		pdb, err := w.env.Client.PolicyV1().PodDisruptionBudgets(wl.Namespace).Get(ctx, wl.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		pdb.Status.DisruptionsAllowed, pdb.Status.CurrentHealthy, pdb.Status.DisruptedPods = 1, int32(wl.Replicas), nil
		if _, err := w.env.Client.PolicyV1().PodDisruptionBudgets(wl.Namespace).UpdateStatus(ctx, pdb, metav1.UpdateOptions{FieldManager: managerController}); err != nil {
			return fmt.Errorf("resetting PDB %s/%s: %w", wl.Namespace, wl.Name, err)
		}
	}
	return nil
}
