package main

// How many copies of each function may run at once. Every worker has reserved concurrency: it is both a
// guarantee (a flood of webhook calls or another application in the account cannot take the executions a
// spot notice or a drain needs) and a cap (a flood of events cannot run up the account's bill or starve
// the other functions). A queue's event source never polls more batches than its function may run, since a
// batch Lambda throttles still counts as a receive and may end in the dead-letter queue.
const (
	// queuePollers is the provisioning and disruption-wake event sources' maximum concurrency, Lambda's
	// minimum. Their functions are single writers serialised by a lease in the state table: a second
	// invocation finds the lease held and coalesces, so more pollers would only add empty runs.
	queuePollers = 2
	// singleWriterConcurrency is queuePollers plus one for the one-minute schedule, so neither the
	// schedule nor a batch is ever throttled while another run holds the lease.
	singleWriterConcurrency = queuePollers + 1
	// lifecycleConcurrency lets the schedule and an instance-running event start together; the lease
	// serialises them.
	lifecycleConcurrency = 2
	// interruptionConcurrency handles a mass spot reclaim: 1,000 notices arrive as 100 batches of 10, and
	// a batch takes a few seconds (state writes, a provisioning wake-up, a termination request each), so
	// 10 at a time clears them well inside the two-minute notice.
	interruptionConcurrency = 10
	// terminationConcurrency is how many drain steps run at once. A step evicts a tier of one node's pods
	// and re-sends itself with a delay, so 10 concurrent steps keep hundreds of drains moving without
	// flooding the API server with evictions.
	terminationConcurrency = 10
)
