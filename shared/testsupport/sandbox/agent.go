package sandbox

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// agent stands in for every launched instance's kubelet (and for the cloud controller manager's node
// deletion): an instance that has been running for BootDelay joins as a Node with the labels and taints
// of its user data and the capacity of its type; pods bound to its Nodes start; pods being deleted on
// them finish; the Node of a terminated instance goes away.
type agent struct {
	ec2       *ec2.Client
	client    kubernetes.Interface
	types     map[string]scheduling.InstanceInfo
	bootDelay time.Duration
	tl        *Timeline
	onError   func(error)

	mu      sync.Mutex
	tracked map[string]bool      // instances Nodewright launched that are not terminated
	seen    map[string]time.Time // instance id → when the agent first saw it running
	joined  map[string]string    // instance id → Node name
	failed  map[string]bool      // instances whose user data could not be read (reported once)
	// foreign are instances another provisioner (Karpenter) launched and registered: the agent runs
	// their pods and removes their Nodes when they are terminated, but never joins them from user data.
	foreign map[string]bool
}

func (a *agent) run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if err := a.sync(ctx); err != nil && ctx.Err() == nil {
			a.onError(fmt.Errorf("node agent: %w", err))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (a *agent) sync(ctx context.Context) error {
	if err := a.syncInstances(ctx); err != nil {
		return err
	}
	return a.syncPods(ctx)
}

// syncInstances joins booted instances and removes the Nodes of terminated ones.
func (a *agent) syncInstances(ctx context.Context) error {
	insts, err := a.instances(ctx)
	if err != nil {
		return err
	}
	now := time.Now()
	for _, inst := range insts {
		id := aws.ToString(inst.InstanceId)
		a.mu.Lock()
		node, joined := a.joined[id]
		first, seen := a.seen[id]
		if !seen {
			a.seen[id] = now
			first = now
		}
		broken := a.failed[id] || a.foreign[id]
		a.mu.Unlock()
		switch inst.State.Name {
		case ec2types.InstanceStateNameRunning, ec2types.InstanceStateNamePending:
			if joined || broken || now.Sub(first) < a.bootDelay {
				continue
			}
			name, err := a.join(ctx, inst)
			if err != nil {
				a.mu.Lock()
				a.failed[id] = true
				a.mu.Unlock()
				a.onError(fmt.Errorf("instance %s cannot join: %w", id, err))
				continue
			}
			a.mu.Lock()
			a.joined[id] = name
			a.mu.Unlock()
		default: // shutting-down, terminated, stopping, stopped: the kubelet is gone
			if inst.State.Name == ec2types.InstanceStateNameTerminated && !joined {
				a.mu.Lock()
				delete(a.tracked, id)
				a.mu.Unlock()
			}
			if !joined {
				continue
			}
			err := a.client.CoreV1().Nodes().Delete(ctx, node, metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				return err
			}
			if err == nil {
				a.tl.Printf("node-agent", "instance %s is %s: Node %s removed", id, inst.State.Name, node)
			}
			a.mu.Lock()
			delete(a.joined, id)
			a.mu.Unlock()
		}
	}
	return nil
}

// instances describes, by id, the instances the agent is the kubelet of: those still to join (every
// instance the fleet watch saw launched, see track) and, of the joined ones, only those no longer
// running. A tag-filtered DescribeInstances would be simpler, but moto answers it in time that grows
// with the square of the instances (about 10 s at a thousand), which made the agent, not Nodewright,
// the limit of a burst.
func (a *agent) instances(ctx context.Context) ([]ec2types.Instance, error) {
	a.mu.Lock()
	var waiting, joined []string
	for id := range a.tracked {
		if _, ok := a.joined[id]; !ok && !a.failed[id] && !a.foreign[id] {
			waiting = append(waiting, id)
		}
	}
	for id := range a.joined {
		joined = append(joined, id)
	}
	a.mu.Unlock()
	insts, err := describeByID(ctx, a.ec2, waiting, nil)
	if err != nil {
		return nil, err
	}
	gone, err := describeByID(ctx, a.ec2, joined, []ec2types.Filter{{Name: aws.String("instance-state-name"),
		Values: []string{"shutting-down", "terminated", "stopping", "stopped"}}})
	return append(insts, gone...), err
}

// describeBatch is how many ids one DescribeInstances asks for.
const describeBatch = 500

// describeByID describes ids (in batches) that match filters.
func describeByID(ctx context.Context, client *ec2.Client, ids []string, filters []ec2types.Filter) ([]ec2types.Instance, error) {
	var insts []ec2types.Instance
	for len(ids) > 0 {
		n := min(len(ids), describeBatch)
		pages := ec2.NewDescribeInstancesPaginator(client, &ec2.DescribeInstancesInput{InstanceIds: ids[:n], Filters: filters})
		ids = ids[n:]
		for pages.HasMorePages() {
			out, err := pages.NextPage(ctx)
			if err != nil {
				return nil, err
			}
			for _, r := range out.Reservations {
				insts = append(insts, r.Instances...)
			}
		}
	}
	return insts, nil
}

// track makes the agent the kubelet of instances Nodewright launched (the fleet watch hands it every
// CreateFleet's instances).
func (a *agent) track(ids []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, id := range ids {
		a.tracked[id] = true
	}
}

// markForeign tells the agent that id is another provisioner's instance, before it could try to join it.
func (a *agent) markForeign(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.foreign[id] = true
}

// isForeign reports whether id is another provisioner's instance.
func (a *agent) isForeign(id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.foreign[id]
}

// joinForeign registers a foreign instance's Node as that provisioner's bootstrap made it (labels,
// taints and finalizers given) and runs its pods from then on.
func (a *agent) joinForeign(ctx context.Context, inst ec2types.Instance, node *corev1.Node) error {
	id := aws.ToString(inst.InstanceId)
	a.markForeign(id)
	info, ok := a.types[string(inst.InstanceType)]
	if !ok {
		return fmt.Errorf("instance type %s is not in the catalog", inst.InstanceType)
	}
	it, err := scheduling.NewAWSInstanceType(info, scheduling.NodeClassConfig{}, nil)
	if err != nil {
		return err
	}
	if err := a.register(ctx, inst, node, it, info.Architecture); err != nil {
		return err
	}
	a.mu.Lock()
	a.joined[id] = node.Name
	a.mu.Unlock()
	return nil
}

// join registers the instance's Node as its kubelet would: name from the private DNS name, the labels
// and taints of the user data, the well-known labels the kubelet and cloud provider set, capacity and
// allocatable from the instance type, Ready.
func (a *agent) join(ctx context.Context, inst ec2types.Instance) (string, error) {
	id := aws.ToString(inst.InstanceId)
	attr, err := a.ec2.DescribeInstanceAttribute(ctx, &ec2.DescribeInstanceAttributeInput{InstanceId: inst.InstanceId,
		Attribute: ec2types.InstanceAttributeNameUserData})
	if err != nil {
		return "", err
	}
	if attr.UserData == nil || aws.ToString(attr.UserData.Value) == "" {
		return "", fmt.Errorf("no user data")
	}
	boot, err := readUserData(aws.ToString(attr.UserData.Value))
	if err != nil {
		return "", err
	}
	info, ok := a.types[string(inst.InstanceType)]
	if !ok {
		return "", fmt.Errorf("instance type %s is not in the catalog", inst.InstanceType)
	}
	it, err := scheduling.NewAWSInstanceType(info, scheduling.NodeClassConfig{Kubelet: scheduling.KubeletConfig{MaxPods: boot.MaxPods}}, nil)
	if err != nil {
		return "", err
	}
	zone := aws.ToString(inst.Placement.AvailabilityZone)
	name := aws.ToString(inst.PrivateDnsName)
	if name == "" {
		name = "i-" + id
	}
	labels := map[string]string{
		corev1.LabelHostname: name, corev1.LabelOSStable: "linux", corev1.LabelArchStable: info.Architecture,
		corev1.LabelInstanceTypeStable: string(inst.InstanceType), corev1.LabelTopologyZone: zone,
		corev1.LabelTopologyRegion: zone[:len(zone)-1],
	}
	for k, v := range boot.Labels {
		labels[k] = v
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: corev1.NodeSpec{ProviderID: "aws:///" + zone + "/" + id, Taints: boot.Taints}}
	if err := a.register(ctx, inst, node, it, info.Architecture); err != nil {
		return "", err
	}
	a.tl.Printf("node-agent", "instance %s (%s, %s) joined as Node %s with %d taints", id, inst.InstanceType, zone, name, len(boot.Taints))
	return name, nil
}

// register creates the Node and posts its Ready status, as a kubelet does when it starts.
func (a *agent) register(ctx context.Context, inst ec2types.Instance, node *corev1.Node, it *scheduling.InstanceType, arch string) error {
	name := node.Name
	if _, err := a.client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("registering Node %s: %w", name, err)
	}
	status := corev1.NodeStatus{
		Capacity: it.Capacity.List(), Allocatable: it.Allocatable.List(),
		Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			Message: "sandbox node agent is posting ready status", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}},
		Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: aws.ToString(inst.PrivateIpAddress)},
			{Type: corev1.NodeHostName, Address: name}},
		NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.34.4", OperatingSystem: "linux", Architecture: arch,
			OSImage: "Amazon Linux 2023 (sandbox)", ContainerRuntimeVersion: "containerd://sandbox"},
	}
	// Registration may patch the Node between these calls: post the status on the latest version.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := a.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Status = status
		_, err = a.client.CoreV1().Nodes().UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		return err
	}); err != nil {
		return fmt.Errorf("posting Node %s status: %w", name, err)
	}
	// The API server's TaintNodesByCondition admission taints a new Node not-ready; the node lifecycle
	// controller lifts the taint once the Node reports Ready. The sandbox runs without that controller
	// (its Nodes have no kubelet heartbeats), so the agent lifts it.
	return kube.NewActions(a.client).Untaint(ctx, name, corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule})
}

// syncPods starts the pods bound to the agent's Nodes and finishes the ones being deleted.
func (a *agent) syncPods(ctx context.Context) error {
	a.mu.Lock()
	mine := map[string]bool{}
	for _, n := range a.joined {
		mine[n] = true
	}
	a.mu.Unlock()
	if len(mine) == 0 {
		return nil
	}
	pods, err := a.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName!="})
	if err != nil {
		return err
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if !mine[p.Spec.NodeName] {
			continue
		}
		switch {
		case p.DeletionTimestamp != nil: // the containers stopped; the kubelet confirms the deletion
			zero := int64(0)
			err := a.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero,
				Preconditions: &metav1.Preconditions{UID: &p.UID}})
			if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
				return err
			}
		case p.Status.Phase == corev1.PodPending:
			if err := a.start(ctx, p); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
				return err
			}
		}
	}
	return nil
}

// start reports the pod running and ready, as the kubelet does once its containers are up.
func (a *agent) start(ctx context.Context, p *corev1.Pod) error {
	now := metav1.Now()
	p.Status.Phase = corev1.PodRunning
	p.Status.StartTime = &now
	p.Status.HostIP = "10.0.0.1"
	p.Status.PodIP = "10.0.128.1"
	p.Status.Conditions = []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
	}
	p.Status.ContainerStatuses = nil
	for _, c := range p.Spec.Containers {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image,
			Ready: true, Started: aws.Bool(true), State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}})
	}
	_, err := a.client.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{})
	return err
}
