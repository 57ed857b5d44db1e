// Package scheduling is Nodewright's pure scheduling core: given pending pods, existing nodes,
// in-flight claims, NodePools, DaemonSets and an instance-type catalog, Solve decides which NodeClaims
// to launch and where each pod goes, with Karpenter v1 semantics. The package imports only the standard
// library, k8s.io/api and k8s.io/apimachinery (TestPureImports enforces it); it has no clients, no
// clock, no randomness and no global mutable state, so the same Input always yields the same Plan,
// whatever the order of the input slices.
//
// # Model
//
// Requirement and Requirements are the label algebra: In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte and
// Lte over a set representation (finite set or complement, with integer bounds); intersection;
// Karpenter's compatibility rule that a custom label a pod requires must be defined by the NodePool
// while well-known labels (labels.go) may stay undefined; deprecated label keys normalised; minValues.
// Pods contribute requests (PodRequests: init containers, sidecars, overhead), node-selector and
// node-affinity requirements with Karpenter's relaxation order (RelaxationSteps), tolerations, host
// ports, and topology rules (topology.go). InstanceType carries its labels as requirements, capacity,
// allocatable (the AWS model in allocatable.go: VM memory overhead, kube-reserved CPU and memory,
// eviction thresholds, ENI-limited pod density, maxPods, podsPerCore and reserved overrides) and
// offerings (zone and its id × capacity type × price × availability, minus Input.Unavailable). As in
// Karpenter, an instance type requires absent every AWS instance label it lacks (typerequirements.go),
// so a requirement on hardware it does not have rules it out.
//
// # Algorithm
//
//  1. NodePools are ordered by weight (heaviest first, ties by name Z→A). Each keeps the catalog's types
//     that are compatible with its requirements and have an available offering; a type's usable
//     resources are its allocatable minus the DaemonSet pods that would run on it (overhead per type).
//  2. Identical pods (same namespace, controller and scheduling-relevant spec) form a class. Classes are
//     ordered largest first (CPU, then memory, then creation time and name), which makes the result
//     independent of input order. Decisions and failure reasons are computed per class.
//  3. Existing capacity first: every pod that fits an existing node goes there (initialized nodes
//     first, then uninitialized nodes and in-flight claims, by name; startup and ephemeral taints are
//     ignored while a node initializes; room is net of bound pods and of daemons not yet running).
//  4. The remaining pods are taken largest first. A pod joins an open claim that can take it, or opens
//     a claim in the first NodePool (by weight) whose taints it tolerates, whose requirements it is
//     compatible with and which has a type within its limits that holds it. All preferences start out
//     as requirements; if nothing can take the pod it is relaxed one step in Karpenter's order (next
//     required node-affinity OR-term, heaviest preferred pod affinity, heaviest preferred pod
//     anti-affinity, heaviest preferred node affinity, one ScheduleAnyway spread constraint, then
//     PreferNoSchedule taints) and retried; fully relaxed, it is reported with every NodePool's reason.
//  5. A new claim is packed toward a target type. For each Pareto-efficient type (CPU and memory per
//     dollar) that holds the pod, the solver simulates filling one node from the pending pods with the
//     same requirements and scores the type by how much that node lowers the LP lower bound of the
//     remaining demand per dollar (the pricing step of column generation); after 64 simulated pods the
//     mix is extrapolated to the node's size. When the claim is narrowed to one zone, the simulation
//     takes at most each class's remaining share of that zone under its spread rules (domainRoom),
//     and the demand the LP values is the zone's share rather than the whole workload. The best type
//     is cached until the demand shrinks by 3%. The claim is then filled from all pending classes:
//     each pick takes, among the largest 1024 fitting classes, the one that leaves the target's free
//     CPU and memory closest to zero (norm-based greedy vector packing), so CPU-heavy and
//     memory-heavy pods share nodes.
//  6. When all pods are placed (and spread repaired), claims are re-packed (repack.go). The claims of
//     one NodePool with identical requirements (under zone spread: one zone's claims, at that zone's
//     prices) form a group; a group costing more than 1% above its LP bound has its pods packed anew:
//     the LP over the types that hold every pod gives two types and their node counts, the pods with
//     the least memory per CPU go to the type with less memory per CPU up to its share, and each part
//     is spread evenly (least-loaded node first) over the LP's count of nodes, rounded down and to
//     the nearest; what does not fit is packed again the same way, and packing everything on one type
//     is the baseline. The cheapest result replaces the group's claims if it beats them. Pods never
//     leave their claim's requirements, so zone and other domain counts stay; claims with host-port
//     pods or pods under any hostname rule, and pools with limits or minValues, are not re-packed.
//  7. Each claim then offers the cheapest types that hold its pods plus daemon overhead, sorted by
//     the price of their cheapest available offering and truncated to MaxInstanceTypeOptions (60)
//     while keeping minValues satisfied; its requirements gain instance-type and capacity-type In
//     those options. ClaimPlan reports the offering a launch takes:
//     capacity type by precedence (reserved, spot, on-demand), then the cheapest.
//
// Three caches keep a solve near linear without changing its result: classes with the same topology
// share one classTopology, on which fill caches whether they may join the claim being filled until a
// group it depends on changes (groups carry version counters); a class whose rules only tighten as
// pods land resumes its scan of nodes and claims where its previous pod went; and claims at the front
// whose hostname rules already refuse such a topology are skipped for good.
//
// # Capacity reservations
//
// A reserved offering carries its reservation's ReservationID and ReservationCapacity, the instances it
// still takes (0 is full, never unlimited); in-flight claims whose launch is not answered yet and that
// name a PendingReservationID take one each off that count. A new claim whose target type launches
// into a reservation with instances left takes one (holdReservation) and from then on only accepts
// pods that type holds. When a reservation has none left, every NodePool excludes it
// (capacity-reservation-id NotIn) and prices its types anew, so later claims take spot or on-demand,
// or other types, or fail with a Reservation rejection in a pool that allows only reserved capacity.
// In provisioning (Input.StrictReservations, as Karpenter's provisioner runs without reserved-capacity
// fallback) such a pod then goes to no NodePool after that one (lower weight) and is not relaxed: it
// waits for the next run, when launches have settled what the reservation really takes; a reservation
// EC2 already reports full is no reason to wait, and the next NodePool takes the pod. Disruption's
// simulations fall back to the next NodePool, as Karpenter's do. Within the pool, a pod that a
// used-up reservation leaves still takes the pool's spot or on-demand capacity in the same solve,
// where Karpenter's provisioning defers it one round: each of its claims holds every reservation it
// might use, while here a claim holds exactly one, so a used-up reservation is really used up.
// Offerings carry the reservation labels as Karpenter's do: a reserved offering has
// capacity-reservation-id, -type and -interruptible In [its values], a spot or on-demand one has them
// DoesNotExist, so a pod requiring one never lands on spot or on-demand capacity. Target choice and the
// LP bound price types at their market (non-reserved) price, as a reservation's few instances are no
// supply for the whole demand, and a claim in a reservation counts at its own price. When claims are
// finalised each keeps the reservation it holds (or takes one still free among its options), its
// options narrow to the types that launch into it (all of them under minValues), ClaimPlan names it
// in ReservationID, and its requirements exclude the options' other reservations, so a launch that
// finds it full falls back to spot or on-demand rather than into capacity counted for another claim.
// Claims in a reservation are not re-packed.
//
// NodePool limits subtract the capacity of existing nodes and in-flight claims first; each new claim
// then reserves the largest capacity among the types that hold its first pod (Karpenter's pessimistic
// rule), replaced at the end by the largest of its final options. minValues are enforced while packing
// (MinValuesStrict) or lowered to what is achievable and flagged (MinValuesBestEffort).
//
// # Topology
//
// Topology spread constraints (maxSkew, minDomains, matchLabelKeys, nodeAffinityPolicy Honor and
// Ignore, nodeTaintsPolicy Honor and Ignore; ScheduleAnyway as a relaxable preference) and pod
// affinity and anti-affinity (required, and preferred as relaxable preferences; namespaces and
// namespaceSelector over Input.Namespaces' labels; inverse anti-affinity of pods with required terms,
// running or placed in this solve) are enforced on hostname and on any label key whose values are known
// (topologydomains.go): zones and capacity types of available offerings, instance-type labels
// (instance family, generation...), NodePool requirements and labels with finite values, and the labels
// of existing nodes. A key with no known values is reported as unsupported rather than ignored. Each
// claim is its own hostname domain and the hostname global minimum is 0, as in Karpenter. A pod with a
// rule on another key narrows its claim to one value of that key: the allowed value with the fewest
// matching pods, then (for keys other than zone) the cheapest, then by name; with rules on several keys
// the combinations are tried in that order. An existing node without the key is in no domain, so it
// cannot take a pod whose spread or affinity needs one. Pods running on existing nodes and nominated
// to in-flight claims are counted. Spread is checked against the balanced final distribution of the
// group's pods rather than after every pod (so a claim can take its domain's share at once); if some
// of the group's pods then fail, repairSpread takes the excess back off the claims and reports it, so
// the final plan always respects maxSkew. A pod that does not match its own spread selector only needs
// its domain to be within maxSkew of the least-filled one, as in kube-scheduler. With nodeTaintsPolicy
// Honor a spread is balanced only over the domains of nodes and NodePools whose taints its pods
// tolerate, and pods on other nodes are not counted.
//
// # Volumes
//
// Pods' PersistentVolumeClaims (and generic ephemeral volumes) are resolved against
// Input.PersistentVolumeClaims, PersistentVolumes and StorageClasses (volumetopology.go): a bound
// volume's node affinity, or for a claim waiting for its first consumer its class's
// allowedTopologies, is added to every relaxation step of the pod (hostname terms dropped; the EBS CSI
// zone key normalised to topology.kubernetes.io/zone). OR-ed terms become alternatives tried in order
// before any preference is relaxed. Volume zones narrow where a pod goes, not the domains its spread
// constraints count. Missing, lost or deleting claims and volumes, unfinished bindings, missing
// classes and unbound claims of Immediate classes make the pod unschedulable with the volume named.
//
// Input.CSINodes limit how many volumes each CSI driver attaches to an existing node
// (volumelimits.go), as Karpenter's existing-node check does: a pod is not placed on a node where its
// claims would take a driver's attachments over the CSINode's allocatable count (constraint
// VolumeLimit: "node X: CSI driver D allows N volumes, M attached"). Attachments are counted per
// claim, so a claim shared by pods counts once and a pod whose claims are attached already adds
// nothing; a claim's driver is its bound volume's CSI driver, else its class's provisioner, with
// in-tree EBS counted as ebs.csi.aws.com. A node without a CSINode or a count for the driver, and
// in-flight and new claims, have no limit. Prepare reads the limits and bound pods' attachments once;
// with no counts at all nothing is resolved.
//
// # Cost lower bound
//
// LowerBound solves min Σ price_t·x_t subject to Σ cpu_t·x_t ≥ CPU and Σ mem_t·x_t ≥ memory, x ≥ 0, over
// usable resources at each type's cheapest price. With two constraints an optimal basic solution uses
// at most two types, so it is solved exactly over singles and pairs of the Pareto front.
// Plan.LowerBound sums that bound per NodePool for the pods placed on its new claims, and
// Plan.CostRatio is the plan's price over it. The bound ignores that a pod cannot split across types,
// so for uniform pods whose shape matches no type it is loose (about 14% on the realistic test
// catalog); TestUniformPodsNearOptimum compares those with the exact per-pod optimum instead.
//
// # Not implemented
//
// DRA resource claims are reported as ConstraintUnsupported. Also absent: capacity-reservation types
// (capacity blocks, interruptible) as scheduling inputs, cluster default spread constraints, static
// NodePools and capacity buffers. NodeOverlays are applied to a pool's instance types before they reach
// the solver (shared/core/nodeoverlay); the solver only carries their marks to the claim plan. Capacity
// buffers are not an input either: their virtual pods (IsBufferPod, made by shared/adapters/capacitybuffer) are
// pods like any other here.
package scheduling
