// Package runmetrics turns what each function's run did into CloudWatch EMF records (shared/adapters/metrics),
// with the names and dimensions of metrics.Catalog: one writer per function, called by its main with
// os.Stdout. The writers keep the series an idle cluster writes few, since CloudWatch bills each series
// written in a month (see TestIdleClusterStaysWithinTheBudget): counters are written when they counted
// something, and per-NodePool capacity only for NodePools with Nodewright Nodes.
package runmetrics
