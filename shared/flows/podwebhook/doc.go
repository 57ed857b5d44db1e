// Package podwebhook is the intake of pending pods: the validating admission webhook the API server calls
// when kube-scheduler creates a FailedScheduling Event about a pod (never on the pod's own updates, which
// kube-scheduler makes inside its scheduling loop). A request must carry the secret path token; the pod
// the Event is about is enqueued on the provisioning FIFO queue (one message group per pod, deduplicated
// by pod uid, so one wake-up per pod for five minutes) for the single-writer provisioner.
//
// The answer is always "allowed" and fast: the cluster must never wait on Nodewright or be blocked by it.
// A queue that fails is logged and the Event allowed anyway — the provisioner's one-minute backstop finds
// every pending pod from its own snapshot, so an enqueue is a latency optimisation, never the only path.
//
// A pod that opts out of Karpenter's nodes (karpenter.sh/nodepool DoesNotExist, scheduling.OptsOut) is
// enqueued like any other: the Event names the pod but does not carry its spec, and reading the pod here
// would put an API call into every answer. The provisioner's run ignores it (no launch, Event or record).
package podwebhook
