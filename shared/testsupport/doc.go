// Package testsupport groups what tests, benchmarks and the sandbox run on: real local components
// (awstest's moto, kubetest's control plane, testenv), the IAM proof's recorder (awscalls), the fault
// layer (faults), the sandbox behind `make demo` (sandbox), the scale harness (scalebench), the hard
// cluster generator (hardcluster), the documentation link check (doclinks), the import rules (layout)
// and the Karpenter comparison module (karpentercompare, a module of its own).
//
// Nothing in core, adapters, flows or functions/ imports test support outside its _test.go files, except
// helper packages named for the package they help (interruptiontest, schedulingtest), as net/http's
// httptest is. The CLI imports the sandbox for `nodewright demo`. shared/testsupport/layout's test
// checks the rule.
package testsupport
