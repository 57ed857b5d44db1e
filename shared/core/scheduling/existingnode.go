package scheduling

import (
	"cmp"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// ExistingNode is a node already in the cluster, with the pods bound to it.
type ExistingNode struct {
	Node *corev1.Node
	// Pods bound to the node; terminal and terminating pods are ignored.
	Pods []*corev1.Pod
	// NodePool is the managing NodePool, "" for nodes Nodewright does not manage.
	NodePool string
	// Initialized is false while the node boots; its startup and ephemeral taints are then ignored.
	Initialized bool
	// Allocatable and Capacity backfill the node's status while it is zero (from the NodeClaim).
	Allocatable, Capacity Resources
}

// InFlightClaim is a NodeClaim launched by an earlier solve whose node has not registered yet. Its pods
// are those nominated to it; it counts as capacity so pods waiting for it trigger nothing new.
type InFlightClaim struct {
	Name     string
	NodePool string
	// Labels are the labels its node will carry (single-valued requirements: zone, instance type...).
	Labels                map[string]string
	Taints, StartupTaints []corev1.Taint
	Capacity, Allocatable Resources
	Pods                  []*corev1.Pod
	// PendingReservationID names the capacity reservation the claim was planned into while its launch
	// is not answered yet: EC2 does not count it in the reservation's available instances, so the solve
	// takes one off that reservation's ReservationCapacity. Leave it empty once the instance exists.
	PendingReservationID string
}

// nodeSlot is an existing node or in-flight claim as the solver fills it.
type nodeSlot struct {
	name        string
	pool        string
	initialized bool
	reqs        Requirements
	taints      []corev1.Taint
	available   Resources
	capacity    Resources
	hostPorts   []HostPort
	// attachLimits are the node's CSI volume limits (nil: none); attached are the volumes of those
	// drivers on it, once each (volumelimits.go). A solve appends to attached as to hostPorts.
	attachLimits []driverLimit
	attached     []attachment
	placed       []*corev1.Pod
	// settling is set for a node that takes no pod of a class kept off settling nodes
	// (SolveJob.Settling).
	settling bool
}

// newNodeSlot reads a node for the solver. vols, when not nil, gives the node's CSI volume limits
// and resolves its pods' volumes against them; in-flight claims have no limits.
func newNodeSlot(n ExistingNode, pools map[string]NodePool, daemons []*daemon, vols *volumeIndex) *nodeSlot {
	node := n.Node
	alloc, capacity := ResourcesFromList(node.Status.Allocatable), ResourcesFromList(node.Status.Capacity)
	if alloc.IsZero() {
		alloc = n.Allocatable
	}
	if capacity.IsZero() {
		capacity = n.Capacity
	}
	var startup []corev1.Taint
	if p, ok := pools[n.NodePool]; ok {
		startup = p.StartupTaints
	}
	labels := node.Labels
	reqs := RequirementsFromLabels(labels)
	if _, ok := labels[LabelHostname]; !ok {
		reqs.Add(&Requirement{Key: LabelHostname, values: []string{node.Name}})
	}
	s := &nodeSlot{
		name: node.Name, pool: n.NodePool, initialized: n.Initialized, reqs: reqs,
		taints: SchedulingTaints(node.Spec.Taints, startup, n.Initialized), capacity: capacity,
	}
	if vols != nil {
		s.attachLimits = vols.limits[node.Name]
	}
	used := Resources{}
	var attachments []attachment
	for _, p := range n.Pods {
		if isTerminal(p) {
			continue
		}
		used = used.Add(PodRequests(p)).clampedTo(maxUsed)
		s.hostPorts = append(s.hostPorts, PodHostPorts(p)...)
		if len(s.attachLimits) > 0 && len(p.Spec.Volumes) > 0 {
			attachments = vols.attachments(p, attachments[:0])
			s.attach(attachments)
		}
	}
	// Daemons that will land on the node but are not running yet still need room.
	for _, d := range daemons {
		if d.compatible(s.taints, reqs) && !d.runsOn(n.Pods) {
			used = used.Add(d.requests).clampedTo(maxUsed)
			s.hostPorts = append(s.hostPorts, d.hostPorts...)
		}
	}
	s.available = alloc.Sub(used)
	return s
}

func newInFlightSlot(c InFlightClaim, pools map[string]NodePool, daemons []*daemon) *nodeSlot {
	labels := map[string]string{}
	for k, v := range c.Labels {
		labels[k] = v
	}
	if c.NodePool != "" {
		labels[LabelNodePool] = c.NodePool
	}
	node := &corev1.Node{}
	node.Name, node.Labels, node.Spec.Taints = c.Name, labels, c.Taints
	s := newNodeSlot(ExistingNode{Node: node, Pods: c.Pods, NodePool: c.NodePool, Allocatable: c.Allocatable, Capacity: c.Capacity}, pools, daemons, nil)
	if _, ok := pools[c.NodePool]; !ok {
		s.taints = SchedulingTaints(c.Taints, c.StartupTaints, false)
	}
	return s
}

// orderSlots puts initialized nodes first, then the rest, each by name.
func orderSlots(slots []*nodeSlot) {
	slices.SortStableFunc(slots, func(a, b *nodeSlot) int {
		if a.initialized != b.initialized {
			if a.initialized {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.name, b.name)
	})
}

// canAdd returns nil when the pod of the class, at this relaxation step, fits the node, or what kept
// it off.
func (s *nodeSlot) canAdd(c *podClass, step *classStep, pod *corev1.Pod) (Constraint, string) {
	con := s.fits(c, step, pod)
	switch con {
	case "":
		return "", ""
	case ConstraintTaint:
		return con, fmt.Sprintf("node %s: %v", s.name, Tolerates(c.tols, s.taints, !step.TolerateAllPreferNoSchedule))
	case ConstraintHostPort:
		return con, fmt.Sprintf("node %s: host port %s in use", s.name, HostPortConflict(s.hostPorts, c.hostPorts))
	case ConstraintRequirement:
		return con, fmt.Sprintf("node %s: %v", s.name, compatibleStrict(s.reqs, step.Requirements))
	case ConstraintVolumeLimit:
		return con, s.attachRefusal(c.attach[pod])
	case ConstraintConsolidateAfter:
		return con, fmt.Sprintf("node %s: still inside its NodePool's consolidateAfter, it takes no pod of the nodes being consolidated", s.name)
	default:
		return con, fmt.Sprintf("node %s: not enough %v", s.name, c.requests.Exceeding(s.available))
	}
}

// admits reports whether canAdd would return nil, for the placement loops, which try every node
// for every pod and only need to know whether it fits: formatting each refusal was a large part of
// a solve over many full nodes. It checks room first, the cheapest test and the one that refuses
// most often.
func (s *nodeSlot) admits(c *podClass, step *classStep, pod *corev1.Pod) bool {
	return c.requests.Fits(s.available) && s.fits(c, step, pod) == ""
}

// fits is canAdd without the text: the first constraint that keeps the pod off, in canAdd's order.
// Only the CSI volume limits depend on the pod rather than its class (its own claims).
func (s *nodeSlot) fits(c *podClass, step *classStep, pod *corev1.Pod) Constraint {
	if s.settling && c.offSettling {
		return ConstraintConsolidateAfter
	}
	if err := Tolerates(c.tols, s.taints, !step.TolerateAllPreferNoSchedule); err != nil {
		return ConstraintTaint
	}
	if p := HostPortConflict(s.hostPorts, c.hostPorts); p != nil {
		return ConstraintHostPort
	}
	if !compatibleStrictOK(s.reqs, step.Requirements) {
		return ConstraintRequirement
	}
	if !c.requests.Fits(s.available) {
		return ConstraintResources
	}
	if len(s.attachLimits) > 0 && !s.attachFits(c.attach[pod]) {
		return ConstraintVolumeLimit
	}
	return ""
}

func (s *nodeSlot) add(c *podClass, pod *corev1.Pod) {
	s.available = s.available.Sub(c.requests)
	s.hostPorts = append(s.hostPorts, c.hostPorts...)
	if len(s.attachLimits) > 0 {
		s.attach(c.attach[pod])
	}
	s.placed = append(s.placed, pod)
}

// compatibleStrict is Compatible for a concrete node: a key the pod requires with In, Exists or bounds
// must be among the node's labels, well-known or not.
func compatibleStrict(node, pod Requirements) error {
	for key, req := range pod {
		if _, ok := node[key]; ok {
			continue
		}
		if allowsAbsence(req) {
			continue
		}
		return &IncompatibleError{Key: key, Incoming: req.String()}
	}
	return node.Intersects(pod)
}

// compatibleStrictOK is compatibleStrict(node, pod) == nil, without wording the refusal.
func compatibleStrictOK(node, pod Requirements) bool {
	for key, req := range pod {
		if _, ok := node[key]; !ok && !allowsAbsence(req) {
			return false
		}
	}
	return node.intersectsAll(pod)
}
