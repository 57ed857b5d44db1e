// Package podwebhook is the intake of pending pods: the validating admission webhook the API server calls
// on pods/status updates. A request must carry the secret path token; the pod it describes, when
// kube-scheduler has just marked it Unschedulable, is enqueued on the provisioning FIFO queue (one message
// group per cluster, deduplicated by pod uid and resourceVersion) for the single-writer provisioner.
//
// The answer is always "allowed" and fast: the cluster must never wait on Nodewright or be blocked by it.
// A queue that fails is logged and the pod allowed anyway — the provisioner's one-minute backstop finds
// every pending pod from its own snapshot, so an enqueue is a latency optimisation, never the only path.
package podwebhook
