// Package crash turns a panic on any goroutine of a run into an error on the run's own path, so a bug in
// one step ends that run with its stack on record instead of killing the process: a Lambda that dies
// holds its lease and its queue batch until they time out, and every trigger in between is lost to
// coalescing. It holds PanicError, Capture (for a function's own deferred recovery) and Group (an
// errgroup whose goroutines' panics come back from Wait). It imports nothing of Nodewright.
package crash
