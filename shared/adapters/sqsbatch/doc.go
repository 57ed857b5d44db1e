// Package sqsbatch works through a Lambda SQS batch inside the invocation's deadline, so that a
// transient failure costs seconds, not the queue's visibility timeout:
//
//   - a message whose handling fails for a transient reason is tried again inside the invocation, with
//     exponential backoff and full jitter, while the deadline leaves room (Policy.Do);
//   - a handler stops starting messages when the deadline is near and reports the ones it did not
//     finish as failures (Policy.HasTime), so nothing is lost when the invocation ends;
//   - a message that still failed is made visible again after a few seconds, growing with its receive
//     count (Policy.Requeue, ChangeMessageVisibility), instead of after the queue's visibility timeout.
package sqsbatch
