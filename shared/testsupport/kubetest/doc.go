// Package kubetest runs a real local Kubernetes control plane for tests: etcd and kube-apiserver, plus
// kube-scheduler and kube-controller-manager when a test needs pods bound or PodDisruptionBudget status.
// No kubelet runs: tests create Nodes and set pod status themselves, or run the project's node agent.
//
// The binaries are built from the Go module proxy by .ci/kube-bin.sh (`make kube-bin`) into
// $NW_KUBE_BIN, by default ~/.cache/nodewright/kube-<version>. A test package shares one control plane:
//
//	func TestMain(m *testing.M) { os.Exit(kubetest.Main(m)) }
//
//	func TestEviction(t *testing.T) {
//		cp := kubetest.Shared(t, kubetest.Options{ControllerManager: true})
//		ns := cp.Namespace(t) // a fresh namespace per test, deleted afterwards
//		…
//	}
//
// The apiserver listens on 127.0.0.1 with advertise-address=127.0.0.1 and endpoint-reconciler-type=none,
// serves a certificate from a CA made for the run, authenticates an admin bearer token (group
// system:masters) and authorizes with RBAC, so least-privilege roles can be tested for real. Under CI=true a
// control plane that cannot start fails the test; elsewhere the test is skipped with the reason.
package kubetest
