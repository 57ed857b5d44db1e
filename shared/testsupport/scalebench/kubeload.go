package scalebench

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
)

// writers is how many requests the loader keeps in flight against the API server.
const writers = 48

// Field managers the loader writes as, so managedFields name who would have written each part.
const (
	managerController = "kube-controller-manager"
	managerKubelet    = "kubelet"
)

// writeNode registers a Node as its kubelet does: created, its status posted, and the not-ready taint
// the API server's admission adds lifted (the node-lifecycle controller's job, which does not run here).
func writeNode(ctx context.Context, c kubernetes.Interface, n *corev1.Node) error {
	status := n.Status
	created, err := c.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{FieldManager: managerKubelet})
	if err != nil {
		return fmt.Errorf("creating Node %s: %w", n.Name, err)
	}
	created.Status = status
	updated, err := c.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{FieldManager: managerKubelet})
	if err != nil {
		return fmt.Errorf("posting Node %s status: %w", n.Name, err)
	}
	if len(updated.Spec.Taints) == 0 {
		return nil
	}
	updated.Spec.Taints = withoutTaint(updated.Spec.Taints, corev1.TaintNodeNotReady)
	if _, err := c.CoreV1().Nodes().Update(ctx, updated, metav1.UpdateOptions{FieldManager: "node-lifecycle-controller"}); err != nil {
		return fmt.Errorf("untainting Node %s: %w", n.Name, err)
	}
	return nil
}

func withoutTaint(ts []corev1.Taint, key string) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range ts {
		if t.Key != key {
			out = append(out, t)
		}
	}
	return out
}

// writePod creates a pod as its controller does (bound already when it has a nodeName) and posts its
// status as the kubelet (or, for a pending pod, kube-scheduler) does.
func writePod(ctx context.Context, c kubernetes.Interface, pod *corev1.Pod) error {
	status := pod.Status
	created, err := c.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{FieldManager: managerController})
	if err != nil {
		return fmt.Errorf("creating pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	created.Status = status
	manager := managerKubelet
	if pod.Spec.NodeName == "" {
		manager = "kube-scheduler"
	}
	if _, err := c.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{FieldManager: manager}); err != nil {
		return fmt.Errorf("posting pod %s/%s status: %w", pod.Namespace, pod.Name, err)
	}
	return nil
}

// writeBasics creates the namespaces, the priority class the workloads use, the gp3 StorageClass, the
// DaemonSets and the PodDisruptionBudgets (with the status kube-controller-manager would compute).
func (p *Plan) writeBasics(ctx context.Context, c kubernetes.Interface) error {
	err := parallel(ctx, len(p.Namespaces), writers, func(ctx context.Context, i int) error {
		_, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: p.Namespaces[i],
			Labels: map[string]string{"team": p.Namespaces[i], "environment": "production"}}}, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("creating namespaces: %w", err)
	}
	if _, err := c.SchedulingV1().PriorityClasses().Create(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "high-priority"},
		Value: 100000, Description: "customer-facing services"}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the priority class: %w", err)
	}
	bind := storagev1.VolumeBindingWaitForFirstConsumer
	if _, err := c.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "gp3",
		Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}},
		Provisioner: "ebs.csi.aws.com", Parameters: map[string]string{"type": "gp3", "encrypted": "true"},
		VolumeBindingMode: &bind, AllowVolumeExpansion: ptr(true)}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating the storage class: %w", err)
	}
	for _, w := range p.DaemonSets {
		if _, err := c.AppsV1().DaemonSets(w.Namespace).Create(ctx, p.daemonSet(w), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating DaemonSet %s: %w", w.Name, err)
		}
	}
	var pdbs []Workload
	for _, w := range p.Workloads {
		if w.PDB {
			pdbs = append(pdbs, w)
		}
	}
	return parallel(ctx, len(pdbs), writers, func(ctx context.Context, i int) error { return writePDB(ctx, c, pdbs[i]) })
}

// daemonSet is w's DaemonSet object, its template a pod of w's without node or status.
func (p *Plan) daemonSet(w Workload) *appsv1.DaemonSet {
	pod := p.Pod(PodPlan{Workload: w.Index, DaemonSet: true, Node: 0}, "template", "10.0.0.1")
	spec := pod.Spec
	spec.NodeName, spec.Affinity = "", nil
	return &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: w.Name, Namespace: w.Namespace, Labels: WorkloadLabels(w)},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: WorkloadLabels(w)},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: WorkloadLabels(w)}, Spec: spec}}}
}

// writePDB creates w's budget (at most one pod unavailable) and the status the disruption controller
// keeps: every replica healthy, one disruption allowed.
func writePDB(ctx context.Context, c kubernetes.Interface, w Workload) error {
	one := intstr.FromInt32(1)
	created, err := c.PolicyV1().PodDisruptionBudgets(w.Namespace).Create(ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: w.Name, Namespace: w.Namespace},
		Spec:       policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &one, Selector: &metav1.LabelSelector{MatchLabels: WorkloadLabels(w)}},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("creating PDB %s/%s: %w", w.Namespace, w.Name, err)
	}
	replicas := int32(w.Replicas)
	created.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: created.Generation, DisruptionsAllowed: 1,
		CurrentHealthy: replicas, DesiredHealthy: replicas - 1, ExpectedPods: replicas,
		Conditions: []metav1.Condition{{Type: policyv1.DisruptionAllowedCondition, Status: metav1.ConditionTrue, Reason: policyv1.SufficientPodsReason,
			LastTransitionTime: metav1.Now(), ObservedGeneration: created.Generation}}}
	if _, err := c.PolicyV1().PodDisruptionBudgets(w.Namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{FieldManager: managerController}); err != nil {
		return fmt.Errorf("posting PDB %s/%s status: %w", w.Namespace, w.Name, err)
	}
	return nil
}

// writeVolume creates the bound PVC and EBS PV of a StatefulSet pod through the API: each created, then
// its status posted (the API server assigns the PVC's uid, which the PV's claimRef then names).
func writeVolume(ctx context.Context, c kubernetes.Interface, pvc *corev1.PersistentVolumeClaim, pv *corev1.PersistentVolume) error {
	pvcStatus, pvStatus := pvc.Status, pv.Status
	created, err := c.CoreV1().PersistentVolumeClaims(pvc.Namespace).Create(ctx, pvc, metav1.CreateOptions{FieldManager: managerController})
	if err != nil {
		return fmt.Errorf("creating PVC %s/%s: %w", pvc.Namespace, pvc.Name, err)
	}
	created.Status = pvcStatus
	if _, err := c.CoreV1().PersistentVolumeClaims(pvc.Namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{FieldManager: managerController}); err != nil {
		return fmt.Errorf("binding PVC %s/%s: %w", pvc.Namespace, pvc.Name, err)
	}
	pv = pv.DeepCopy()
	pv.Spec.ClaimRef.UID = created.UID
	createdPV, err := c.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{FieldManager: "csi-provisioner"})
	if err != nil {
		return fmt.Errorf("creating PV %s: %w", pv.Name, err)
	}
	createdPV.Status = pvStatus
	if _, err := c.CoreV1().PersistentVolumes().UpdateStatus(ctx, createdPV, metav1.UpdateOptions{FieldManager: managerController}); err != nil {
		return fmt.Errorf("binding PV %s: %w", pv.Name, err)
	}
	return nil
}
