package lifecycle

import "fmt"

// RunReport is what a run did, for the handler's log line and the tests.
type RunReport struct {
	// Lease is false when another holder had the lifecycle lease: this run did nothing.
	Lease bool
	// LeaseNotReleased is why the run could not give its lease back at the end (empty when it did): a
	// warning, not a failure — the lease ends by itself at the invocation's deadline (state.LeasedRun).
	LeaseNotReleased string
	// Passes counts the passes made (RunUntilSettled makes several).
	Passes int
	// Claims moved to registered and to initialized.
	Registered, Initialized int
	// Adopted counts pending claims given the instance an interrupted launch left behind.
	Adopted int
	// Rebuilt counts claims rebuilt for own instances no claim stood for (a redeploy with an empty table).
	Rebuilt int
	// HandedOver counts claims sent to the termination flow (registration timeouts, ghost Nodes, deleted
	// Nodes, removed NodePools, stalled drains); the lifecycle terminates no instance and deletes no Node.
	HandedOver int
	// ClaimsDeleted counts claim records deleted.
	ClaimsDeleted int
	// DiedAtLaunch counts the forgotten claims whose instance EC2 terminated while launching it; their
	// offerings are kept out of the solves for state.DiedAtLaunchTTL.
	DiedAtLaunch int
	// FinalizersRemoved counts deleting Nodes released because their instance is gone.
	FinalizersRemoved int
	// NodesLost counts registered claims whose Node the pass found gone while their instance runs (noted;
	// handed over once the Node has stayed gone for reconcile.NodeLostGrace).
	NodesLost int
	// Joining counts, after the last pass, the claims whose Node is still on its way (pending, launched
	// or registered).
	Joining int
	// Deferred counts, in the last pass, the claims whose registration or initialization (or Node
	// finalizer) the pass did not start because its deadline was near; the next pass takes them up. They
	// are not errors; Waiting names them.
	Deferred int
	// Waiting says, per claim (or ghost Node), why its Node is not registered or initialized yet (last pass).
	Waiting map[string]string
	// Skipped says why the repairs were not decided in the last pass, if they were not.
	Skipped string
	// Held says which hand-over rules decided nothing in the last pass, and why (incomplete or empty
	// configuration).
	Held []string
	// Errors are problems with single items ("nodeclaim/<name>: ..."); they did not stop the pass.
	Errors []string
	// InstancesNamed counts the instances given the Name tag of their Node (nameInstances).
	InstancesNamed int
	// MemoryRecorded counts the observations of memory capacity written (recordMemory).
	MemoryRecorded int
	// TemplatesDeleted and ProfilesDeleted name the launch templates and instance profiles deleted
	// because no claim uses them any more.
	TemplatesDeleted, ProfilesDeleted []string
	// Usage is each NodePool's Nodes against its limits (last sweeping pass).
	Usage []PoolUsage
	// Repairs are the unhealthy nodes whose replacement node repair requested (NodeRepair gate).
	Repairs []Repair
	// RepairBlocked names the NodePools whose due repairs were held in the last sweep: too many of their
	// nodes are unhealthy (MaxUnhealthyPercent).
	RepairBlocked []string
	// NodesCreated counts the Nodes registered, per NodePool and zone (Karpenter's nodes_created_total).
	NodesCreated map[PoolZone]int
	// MirrorsWritten and MirrorsDeleted count the NodeClaim mirrors written and deleted; MirrorsLeft the
	// writes the last pass left for the next (mirror.DefaultMaxWrites a pass); MirrorsSkipped says why the
	// last pass wrote none, if it skipped them.
	MirrorsWritten, MirrorsDeleted, MirrorsLeft int
	MirrorsSkipped                              string
	// DeletionsRequested names the claims whose deleted NodeClaim mirror this run turned into a
	// disruption request (mirrordeletions.go).
	DeletionsRequested []string
	// Offerings are the current prices of the offerings Nodewright's live claims run on (last sweeping
	// pass; see OfferingsInUse).
	Offerings []OfferingPrice
}

// PoolZone is a NodePool and a zone.
type PoolZone struct{ NodePool, Zone string }

// add folds one pass's report into the run's.
func (r *RunReport) add(p RunReport) {
	r.Passes += p.Passes
	r.Registered += p.Registered
	r.Initialized += p.Initialized
	r.Adopted += p.Adopted
	r.Rebuilt += p.Rebuilt
	r.HandedOver += p.HandedOver
	r.ClaimsDeleted += p.ClaimsDeleted
	r.FinalizersRemoved += p.FinalizersRemoved
	r.NodesLost += p.NodesLost
	r.InstancesNamed += p.InstancesNamed
	r.MemoryRecorded += p.MemoryRecorded
	r.MirrorsWritten += p.MirrorsWritten
	r.MirrorsDeleted += p.MirrorsDeleted
	r.MirrorsLeft, r.MirrorsSkipped = p.MirrorsLeft, p.MirrorsSkipped
	r.Joining, r.Deferred, r.Waiting, r.Skipped, r.Held = p.Joining, p.Deferred, p.Waiting, p.Skipped, p.Held
	r.Repairs = append(r.Repairs, p.Repairs...)
	r.DeletionsRequested = append(r.DeletionsRequested, p.DeletionsRequested...)
	if p.Usage != nil { // a sweep: its judgement of the pools stands
		r.RepairBlocked = p.RepairBlocked
	}
	if p.Usage != nil { // a pass between sweeps does not sum the usage: the last sweep's stands
		r.Usage, r.Offerings = p.Usage, p.Offerings
	}
	for k, n := range p.NodesCreated {
		if r.NodesCreated == nil {
			r.NodesCreated = map[PoolZone]int{}
		}
		r.NodesCreated[k] += n
	}
	r.Errors = append(r.Errors, p.Errors...)
	r.TemplatesDeleted = append(r.TemplatesDeleted, p.TemplatesDeleted...)
	r.ProfilesDeleted = append(r.ProfilesDeleted, p.ProfilesDeleted...)
}

// String summarises the report in one line (for logs and test failures).
func (r RunReport) String() string {
	return fmt.Sprintf("passes=%d registered=%d initialized=%d adopted=%d rebuilt=%d handedOver=%d claimsDeleted=%d finalizersRemoved=%d nodesLost=%d instancesNamed=%d memoryRecorded=%d mirrorsWritten=%d mirrorsDeleted=%d mirrorsLeft=%d deletionsRequested=%d repairs=%d repairBlocked=%d templatesDeleted=%d profilesDeleted=%d joining=%d deferred=%d errors=%d",
		r.Passes, r.Registered, r.Initialized, r.Adopted, r.Rebuilt, r.HandedOver, r.ClaimsDeleted, r.FinalizersRemoved, r.NodesLost,
		r.InstancesNamed, r.MemoryRecorded, r.MirrorsWritten, r.MirrorsDeleted, r.MirrorsLeft, len(r.DeletionsRequested), len(r.Repairs), len(r.RepairBlocked), len(r.TemplatesDeleted), len(r.ProfilesDeleted), r.Joining, r.Deferred, len(r.Errors))
}
