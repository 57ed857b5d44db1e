// Package mirror shows Nodewright's state where Kubernetes users look (DESIGN.md decision 14): NodeClaim,
// NodePool and EC2NodeClass objects of Nodewright's own API group, nodewright.sh/v1, so a Karpenter
// installed beside it never manages them. They are mirrors: DynamoDB stays the source of truth, the
// functions write them on change only, and a ValidatingAdmissionPolicy (footprint.MirrorPolicy) keeps
// everyone else from writing them.
//
// Its parts, each in its own file:
//
//   - api.go and crds.go: the group, the kinds and their CustomResourceDefinitions (cluster-scoped, a
//     status subresource, Karpenter's printer columns, short names that do not clash with Karpenter's,
//     category nodewright), which `nodewright manifests` prints.
//   - nodeclaim.go: the pure builder that turns a claim record and its Node into the NodeClaim mirror;
//     nodepool.go and nodeclass.go the builders of the NodePool mirror (status.resources and status.nodes
//     from the pool's live claims, Karpenter's four conditions) and of the EC2NodeClass mirror (the
//     class's resolution: subnets, security groups, AMIs, instance profile, the *Ready conditions).
//   - configstatus.go: StatusWriter, which writes the NodePool and EC2NodeClass mirrors of one run's view
//     of the configuration (the disruption function's) and publishes the Events Karpenter puts on those
//     objects (NodeClassNotReady on a NodePool, the not-ready reason on an EC2NodeClass), bounded.
//   - writer.go (with memo.go and client.go): the writer that keeps the mirrors in the cluster equal to
//     what the builder says, writing only what changed, at most Options.MaxWrites objects a run, and
//     deleting the mirrors whose claim is gone. It remembers what it wrote in the process and learns it
//     again with one paginated metadata-only LIST on a cold start; each whole run follows a short watch
//     from there, so a mirror someone else changed (or deleted) is written again.
//   - claimevents.go: ClaimEvents, the publisher that gives each Event about a NodeClaim mirror
//     (NodeClaimObject) the mirror's UID, from the function's own writer or a bounded, cached metadata
//     GET, so `kubectl describe nodeclaims.nodewright.sh` shows it.
//   - finalizer.go and deletion.go: deleting a NodeClaim mirror is a disruption request. NodeClaim mirrors
//     carry Finalizer, so a user's DELETE leaves them Terminating; the writer lists those
//     (Writer.Deleting, from the metadata it lists and watches anyway) for the lifecycle to turn into
//     the claims' disruption requests, and removes the finalizer once the claim is gone. The Drained
//     condition says what holds the removal meanwhile.
//
// mirrortest installs the mirrors into a test's API server.
package mirror
