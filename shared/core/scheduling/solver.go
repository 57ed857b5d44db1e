package scheduling

import (
	"cmp"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
)

// Input is everything one solve looks at. The solver does not modify it.
type Input struct {
	// Pods to place. Callers usually pass the provisionable pods (IsProvisionable) and the pods of
	// nodes being deleted.
	Pods []*corev1.Pod
	// Nodes are the cluster's nodes with their bound pods; InFlight the claims launched but not yet
	// registered. Both are filled before anything new is launched.
	Nodes    []ExistingNode
	InFlight []InFlightClaim
	// NodePools that may launch; order does not matter (weight decides).
	NodePools  []NodePool
	DaemonSets []*appsv1.DaemonSet
	// InstanceTypes is the catalog for pools that do not bring their own.
	InstanceTypes []*InstanceType
	Unavailable   UnavailableOfferings
	// MinValuesPolicy defaults to Strict.
	MinValuesPolicy MinValuesPolicy
	// PersistentVolumeClaims, PersistentVolumes and StorageClasses resolve the volumes of Pods to the
	// zones (or other node labels) their storage can attach in. A pod whose claim, volume or class is
	// missing here is reported unschedulable.
	PersistentVolumeClaims []*corev1.PersistentVolumeClaim
	PersistentVolumes      []*corev1.PersistentVolume
	StorageClasses         []*storagev1.StorageClass
	// CSINodes give, per node (by name), how many volumes each CSI driver may attach to it: a pod
	// whose volumes would take a driver over its count is not placed there. A node without one, or
	// without a count for a driver, has no limit for it; new claims have none either.
	CSINodes []*storagev1.CSINode
	// Namespaces give the labels that pod (anti-)affinity namespaceSelectors match; a namespace not
	// listed has only its kubernetes.io/metadata.name label.
	Namespaces []*corev1.Namespace
	// IgnorePreferences drops preferred node affinity up front (Karpenter's PREFERENCE_POLICY=Ignore).
	IgnorePreferences bool
	// StrictReservations is provisioning's rule for capacity reservations (Karpenter's provisioner runs
	// its scheduler without reserved-capacity fallback): a pod that a NodePool would put into a
	// reservation, but for claims of this solve or in-flight claims not launched yet having used it up,
	// is not offered to the NodePools after it (lower weight) nor relaxed; it waits for the next run
	// (deferredByReservation). Disruption's simulations leave it off, as Karpenter's do.
	StrictReservations bool
}

// solver holds the state of one solve.
type solver struct {
	in      Input
	pools   []*poolState
	slots   []*nodeSlot
	claims  []*claim
	demand  demand
	strict  bool
	failed  []PodFailure
	classes []*podClass
	// pending are the valid classes that may still have pods to place, largest first.
	pending []*podClass
	// opened is the claim the last call to place created, if any, for fill.
	opened *claim
	topo   *topology
	// narrowed caches relaxation steps narrowed to one domain of a topology key.
	narrowed map[narrowKey]*classStep
	// fillBuf is fill's scratch list of candidate classes.
	fillBuf []*podClass
	// joinEpoch changes whenever cached mayJoin checks may no longer hold (fill).
	joinEpoch int
	// targets caches target instance types (see chooseTarget).
	targets map[targetKey]cachedTarget
	// res counts the instances capacity reservations still take; nil when the catalogs have none.
	res *reservationLedger
	// deferredBy is set by place when a pod waits for a used-up reservation of that pool
	// (Input.StrictReservations); placeClass reads and clears it.
	deferredBy *poolState
	// views, when set (Prepared.Solve), are in.Nodes as setupTopology reads them, one per node.
	views []*nodeView
	// existing, when set with views, counts the running pods in the topology groups (existingcounts.go).
	existing *existingCounts
	// domains, when set (Prepared.Solve), answer domainsOfSlots and domainValues from the Prepared.
	domains *preparedDomains
	// slotDomains caches, per topology key, the distinct domains of the slots (see noSlotAllows).
	slotDomains map[string][]string
}

// Solve computes a plan. It returns an error only for malformed input (an unparsable NodePool
// requirement); pods that cannot be placed are reported in Plan.Unschedulable.
func Solve(in Input) (*Plan, error) {
	daemons := newDaemons(in.DaemonSets)
	byName := poolsByName(in.NodePools)
	vols := newVolumeIndex(in)
	slots := make([]*nodeSlot, 0, len(in.Nodes)+len(in.InFlight))
	for _, n := range in.Nodes {
		slots = append(slots, newNodeSlot(n, byName, daemons, vols))
	}
	for _, c := range in.InFlight {
		slots = append(slots, newInFlightSlot(c, byName, daemons))
	}
	orderSlots(slots)
	return solve(in, daemons, slots, nil, vols, nil)
}

// newPoolStates makes in's pools, in orderNodePools' order.
func newPoolStates(in Input, daemons []*daemon) ([]*poolState, error) {
	var pools []*poolState
	for _, p := range orderNodePools(in.NodePools) {
		ps, err := newPoolState(p, in.InstanceTypes, daemons, in.Unavailable)
		if err != nil {
			return nil, err
		}
		pools = append(pools, ps)
	}
	return pools, nil
}

func poolsByName(pools []NodePool) map[string]NodePool {
	byName := make(map[string]NodePool, len(pools))
	for _, p := range pools {
		byName[p.Name] = p
	}
	return byName
}

// solve is Solve once the existing nodes and in-flight claims of in are slots (fresh, ordered by
// orderSlots); Solve and Prepared.Solve share it. vols is in's volumes read (newVolumeIndex); from,
// when not nil, is what a Prepared solve reuses; Solve passes nil.
func solve(in Input, daemons []*daemon, slots []*nodeSlot, views []*nodeView, vols *volumeIndex, from *preparedSolve) (*Plan, error) {
	s := &solver{in: in, strict: in.MinValuesPolicy != MinValuesBestEffort, targets: map[targetKey]cachedTarget{}, views: views}
	var pools []*poolState
	var keys *podKeys
	var keptOff func(*corev1.Pod) bool
	if from != nil {
		pools, keys, s.existing, s.domains, keptOff = from.pools, from.keys, from.counts, from.domains, from.keptOff
	}
	if pools == nil {
		var err error
		if pools, err = newPoolStates(in, daemons); err != nil {
			return nil, err
		}
	}
	for _, ps := range pools {
		s.pools = append(s.pools, ps.fresh())
	}
	catalogs := [][]*InstanceType{in.InstanceTypes}
	for _, p := range in.NodePools {
		catalogs = append(catalogs, p.InstanceTypes)
	}
	if s.res = newReservationLedger(catalogs, in.InFlight); s.res != nil {
		for _, ps := range s.pools {
			ps.reservations = true
		}
		if ids := s.res.takenByInFlight(); len(ids) > 0 {
			s.useUp(ids)
		}
	}
	s.slots = slots
	for _, slot := range s.slots {
		for _, ps := range s.pools {
			if ps.Name == slot.pool {
				ps.limits.subtract(slot.capacity)
			}
		}
	}
	classes := buildClasses(in.Pods, vols, hasPreferNoScheduleTaint(in.NodePools), in.IgnorePreferences, keys, keptOff)
	if vols.limits != nil {
		// Some node limits CSI attachments: the pods' volumes count against it (volumelimits.go).
		for _, c := range classes {
			c.attach = vols.classAttachments(c.pods)
		}
	}
	s.setupTopology(classes)
	for _, c := range classes {
		if c.invalid == nil {
			n := float64(len(c.pods))
			s.demand.cpu += n * float64(c.requests.CPU)
			s.demand.memory += n * float64(c.requests.Memory)
			s.demand.pods += n * float64(c.requests.Pods)
		}
	}
	s.classes = classes
	for _, c := range classes {
		if c.invalid == nil {
			s.pending = append(s.pending, c)
		}
	}
	s.placeOnExisting()
	for _, c := range classes {
		s.placeClass(c)
	}
	s.repairSpread()
	s.repackClaims()
	return s.plan(), nil
}

// placeOnExisting puts every pod that fits, at its first relaxation step, onto existing nodes and
// in-flight claims, largest classes first. Pods that do not fit wait for placeClass.
func (s *solver) placeOnExisting() {
	if len(s.slots) == 0 {
		return
	}
	for _, c := range s.classes {
		if c.invalid != nil {
			continue
		}
		st := &c.steps[0]
		start := c.next
		var done, rest []*corev1.Pod
		cursor := 0
		for _, pod := range c.pods[start:] {
			placed := false
			if s.noSlotAllows(st) {
				cursor = len(s.slots)
			}
			for ; cursor < len(s.slots); cursor++ {
				if s.slots[cursor].admits(c, st, pod) && s.slotAllows(st, s.slots[cursor]) {
					s.addToSlot(s.slots[cursor], c, st, pod)
					s.consume(c)
					placed = true
					break
				}
			}
			if st.topo != nil {
				cursor = 0 // topology changes as pods land; rescan from the first node
			}
			if placed {
				done = append(done, pod)
			} else {
				rest = append(rest, pod)
			}
		}
		// Placed pods move before c.next, in order; the rest wait for placeClass.
		c.pods = append(append(c.pods[:start:start], done...), rest...)
	}
}

// placeClass places the remaining pods of one class. Each pod goes, at the class's current relaxation
// step, to an existing node, an open claim, or a new claim; a new claim is then filled with the pods
// of any class that pack best into it (fill). Once a pod cannot be placed even fully relaxed, no later
// pod of the class can be either (capacity only shrinks), so they share its failure.
func (s *solver) placeClass(c *podClass) {
	if c.invalid != nil {
		for _, pod := range c.pods {
			s.failed = append(s.failed, newPodFailure(pod, "", []Rejection{*c.invalid}))
		}
		return
	}
	// A node or claim that refused a pod refuses the class's next pods at the same step too when the
	// step's rules only tighten as pods land (monotone): the scan then resumes where the last pod went.
	slotHint, claimHint, hintStep := 0, 0, -1
	for c.next < len(c.pods) {
		pod := c.pods[c.next]
		placed := false
		var deferredBy *poolState
		for ; c.step < len(c.steps); c.step++ {
			st := &c.steps[c.step]
			slotCursor, claimCursor := 0, 0
			if c.step == hintStep && (st.topo == nil || st.topo.monotone) {
				slotCursor, claimCursor = slotHint, claimHint
			}
			if s.place(c, st, pod, &slotCursor, &claimCursor) {
				placed = true
				slotHint, claimHint, hintStep = slotCursor, claimCursor, c.step
				break
			}
			if deferredBy, s.deferredBy = s.deferredBy, nil; deferredBy != nil {
				break // waiting for a reservation: not relaxed, as in Karpenter
			}
		}
		if !placed {
			last := &c.steps[len(c.steps)-1]
			if deferredBy != nil {
				last = &c.steps[c.step]
			}
			rejections := s.diagnose(c, last)
			if deferredBy != nil {
				rejections = s.deferralRejections(rejections, deferredBy)
			}
			s.topo.forget(last.topo, len(c.pods)-c.next)
			for _, p := range c.pods[c.next:] {
				s.failed = append(s.failed, newPodFailure(p, last.Relaxed, rejections))
			}
			c.next = len(c.pods)
			return
		}
		s.consume(c)
		if s.opened != nil {
			cl := s.opened
			s.opened = nil
			s.fill(cl)
		}
	}
}

// consume marks the next pod of c placed.
func (s *solver) consume(c *podClass) {
	c.next++
	s.demand.cpu -= float64(c.requests.CPU)
	s.demand.memory -= float64(c.requests.Memory)
	s.demand.pods -= float64(c.requests.Pods)
}

// place tries existing nodes, then open claims, then a new claim per NodePool in weight order.
func (s *solver) place(c *podClass, st *classStep, pod *corev1.Pod, slotCursor, claimCursor *int) bool {
	if s.noSlotAllows(st) {
		*slotCursor = len(s.slots) // where the scan would end
	}
	for ; *slotCursor < len(s.slots); *slotCursor++ {
		slot := s.slots[*slotCursor]
		if slot.admits(c, st, pod) && s.slotAllows(st, slot) {
			s.addToSlot(slot, c, st, pod)
			return true
		}
	}
	if ct := st.topo; ct != nil && ct.monotone {
		// Skip the leading claims whose hostname rules already refuse this topology; they never
		// accept it again.
		for ct.hostBlocked < len(s.claims) && !s.topo.hostAllowed(ct, s.claims[ct.hostBlocked].host) {
			ct.hostBlocked++
		}
		*claimCursor = max(*claimCursor, ct.hostBlocked)
	}
	for ; *claimCursor < len(s.claims); *claimCursor++ {
		cl := s.claims[*claimCursor]
		if cl.pool.tolerates(c, st) != nil {
			continue
		}
		if s.tryClaim(cl, c, st, pod) {
			return true
		}
	}
	for _, ps := range s.pools {
		deferred := false
		for _, zst := range s.newClaimSteps(st) {
			if cl := s.openClaim(ps, c, zst, pod); cl != nil {
				s.claims = append(s.claims, cl)
				*claimCursor = len(s.claims) - 1
				s.opened = cl
				s.topo.record(zst.topo, cl.host, cl.reqs, ps.Taints)
				return true
			}
			deferred = deferred || s.deferredByReservation(ps, c, zst)
		}
		if deferred {
			s.deferredBy = ps // no NodePool after this one takes the pod in this solve
			return false
		}
	}
	return false
}

// plan finalises the claims and assembles the answer.
func (s *solver) plan() *Plan {
	p := &Plan{NewClaims: []ClaimPlan{}, ExistingNodes: []NodePlacement{}, Unschedulable: []PodFailure{}}
	placed := map[*poolState]Resources{}
	for _, cl := range s.claims {
		cp, ok := s.finalize(cl)
		if !ok {
			continue
		}
		p.NewClaims = append(p.NewClaims, cp)
		p.TotalPrice += cp.Price
		if cp.ReservationID != "" {
			p.LowerBound += cp.Price // the reservation's count, not the LP, limits these
			continue
		}
		placed[cl.pool] = placed[cl.pool].Add(cl.requests)
	}
	for _, ps := range s.pools {
		if ps.preparedErr != nil && ps.preparedErr.Constraint == ConstraintOffering {
			p.NoCompatibleInstanceTypes = append(p.NoCompatibleInstanceTypes, ps.Name)
		}
	}
	// The bound is summed per NodePool: each pool's pods over that pool's types and prices.
	for _, ps := range s.pools {
		if r, ok := placed[ps]; ok {
			caps := capacities(ps.candidates)
			if s.res != nil {
				caps = marketCapacities(ps.candidates, marketPrices(ps.candidates, ps.reqs, ps.unavailable))
			}
			p.LowerBound += LowerBound(float64(r.CPU), float64(r.Memory), caps)
		}
	}
	for _, slot := range s.slots {
		if len(slot.placed) > 0 {
			p.ExistingNodes = append(p.ExistingNodes, NodePlacement{Name: slot.name, Pods: slot.placed, PodNames: podNames(slot.placed)})
		}
	}
	slices.SortFunc(p.ExistingNodes, func(a, b NodePlacement) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortFunc(s.failed, func(a, b PodFailure) int { return cmp.Compare(a.PodName, b.PodName) })
	p.Unschedulable = append(p.Unschedulable, s.failed...)
	return p
}
