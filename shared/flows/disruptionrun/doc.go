// Package disruptionrun is the use case behind functions/disruption and `nodewright plan --disrupt`: it
// runs every voluntary disruption Karpenter has (consolidation, drift, expiry and the disruptions an
// operator asks for with `nodewright disrupt`). It turns Karpenter v1 configuration and the cluster's
// state into the pure engine's input (shared/core/disruption) and carries the engine's commands out.
//
//   - nodepools.go converts NodePools into the engine's view (policy, consolidateAfter, budgets).
//   - Runner (runner.go) is one disruption run under the "disruption" lease: advance.go takes the
//     commands in progress one step (hand the nodes to termination once every replacement has
//     initialized; on a failed or late replacement roll a graceful command back, but drain a forceful
//     one's nodes anyway (replacementfailed.go: expiry is a hard lifetime), recording the failure for
//     the back-off of replacements per NodePool and image (backoff.go); finish when the nodes are gone; lift stale
//     karpenter.sh/disrupted taints); snapshot.go reads a complete snapshot into disruption.Input (or
//     names what it could not read, and nothing is decided); the engine decides; after
//     Config.ValidationDelay the command is re-checked with disruption.Validate on a fresh snapshot.
//     The cluster is read whole once per run (advance and the first decision share that read); a
//     validation and a later command's decision bring it forward (reread.go: the Snapshotter's
//     catch-up, and only the nodes whose Node or pods changed are rebuilt in the input);
//     execute.go carries it out replacement first (ledger reservation, command record, taint, replacement
//     claims launched through the provisioning launch path, or termination requests for a delete).
//   - drift.go judges every managed node's claim on each read (provisioning.Launches.Drift: the NodePool and
//     EC2NodeClass as configured, their resolution of this run, the launch path's own AMI choice) and fills
//     the engine's Drifted, ExpiresAt, Requested and Unhealthy (node repair's request); the run's first read records the changes (Drifted
//     condition set, changed or cleared; hashes re-stamped after a hash-version change), with a Drifted
//     Event and a decision record. A detection that cannot decide changes nothing and rolls nothing. A
//     claim an operator asked to disrupt that has no Node goes straight to termination. Expired and
//     requested commands reserve the ledger without a budget limit (they still count against the graceful
//     reasons' budgets).
//   - reservationends.go acts on the end of the capacity reservations claims run in, once per run
//     before the first decision (reservationplan.go decides, purely): a capacity block's nodes are handed
//     to the termination flow from 40 minutes before its end, with EC2's reclaim time (30 minutes before
//     the end) as their deadline, and no budget; a reserved claim whose reservation is no longer active
//     or gone is demoted to on-demand (record and Node labels), as Karpenter's capacityreservation
//     controllers do. Reservations come from the run's EC2NodeClass resolutions; only those no class
//     selects are looked up by id. A claim handed over carries a GoneBy and counts as disrupting.
//   - staticscaledown.go and staticdrift.go keep static NodePools (spec.replicas, gate StaticCapacity),
//     which the engine never sees, once per run before the first decision: a pool above its replicas
//     gives up the surplus in Karpenter's order (staticscaledownplan.go: not launched, no Node, empty,
//     lowest disruption cost) as one Overprovisioned delete command under its reason-less budgets; a
//     drifted node is replaced 1:1 (one replacement of the same pool, replacement first) within the
//     pool's Drifted budget and limits.nodes, and not while the pool is above its replicas. Both go
//     through execute like the engine's commands. A claim with no Node has no taint and no Event.
//   - explain.go records decisions under node/NAME and nodeclaim/NAME (for `nodewright explain`) and
//     publishes Events with Karpenter's reasons; kept nodes are recorded only when their reason changes or
//     every Config.KeptEvery.
//   - scores.go reports what the Balanced policy scored (Report.Scores, read by the score metrics) and
//     publishes ConsolidationApproved / ConsolidationRejected on the Nodes, at most MaxScoreEvents per
//     run and a node's again only when its message changes or every Config.KeptEvery.
//   - podevents.go dates each node's last pod event; its comment states the precision.
//   - buffers.go keeps CapacityBuffers' room (gate CapacityBuffer): their virtual pods are placed on
//     the nodes that have room and bound there in the engine's input, the rest are pending.
//
// Order of writes, for crash safety: ledger, command record, replacement claims (pending), taint,
// launch. A crash anywhere leaves something the next run advances or rolls back (a pending claim never
// launched is timed out by the reconciler, which rolls its command back). Recording the replacements
// before the taint means a provisioning run never sees the disrupted nodes' pods without the
// replacements in flight for them, so it launches nothing of its own for them.
package disruptionrun
