// Package reconcile compares what Nodewright recorded (claims), what EC2 runs (instances tagged for the
// cluster) and what Kubernetes sees (Nodes), and says what to repair: the backstop for every event that
// was missed, duplicated or interrupted (DESIGN.md decision 5, reference §d.4, §d.6).
//
// Only what Nodewright owns is in the input: instances tagged nodewright.sh/cluster=<cluster>, and Nodes
// matter only as the Nodes of those instances or of claims. A Node or instance of Karpenter's or of a
// managed node group is never the subject of a repair. Nothing is terminated or deleted here: nodes that
// must go are handed to the termination flow (drain, terminate, delete the Node once the instance is gone).
//
// Decisions, each with a reason:
//   - adopt: a pending claim whose instance exists (a crash between CreateFleet and the claim update)
//     becomes launched with that instance, instead of launching again or leaking it;
//   - rebuild: an own instance no claim stands for, older than 30 seconds (EC2's eventual consistency),
//     gets its claim rebuilt from its tags and its Node (a redeploy with an empty table, a lost record);
//   - launch timeout: a claim still pending 5 minutes after it was written is deleted;
//   - registration timeout: a launched claim (or a rebuilt one) whose Node has not registered 15 minutes
//     after the launch is handed to the termination flow;
//   - garbage collection: a launched or registered claim whose instance is gone, 2 minutes or more after
//     its launch (ClaimGCGrace), is deleted, or handed over when a Node that is not Ready is left; either
//     only once EC2, asked by instance id, confirms the instance gone (Action.ConfirmGone);
//   - lost Node: a registered claim whose instance runs but whose Node is gone (deleted with Nodewright's
//     finalizer stripped) is noted when first seen so (NoteNodeLost), and handed to the termination flow
//     once the Node has stayed gone for NodeLostGrace; a Node that comes back clears the note.
//
// It never scales down on incomplete data: if any of the three lists is incomplete, it decides nothing.
// The package is pure: lists and the time in, actions out.
package reconcile
