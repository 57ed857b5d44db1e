package sandbox

import (
	"fmt"
	"os"
	"sort"

	"github.com/nodewright/nodewright/shared/testsupport/testenv"
)

// separateControlPlane gives the control plane (etcd, kube-apiserver, kube-scheduler,
// kube-controller-manager) the first CPU this process may use to itself and puts moto and this process
// (the functions, the webhook, the node agent) on the others, so a measurement of kube-scheduler is not a
// measurement of how much CPU the emulated cloud took from it: in a cluster, AWS and Lambda run
// elsewhere. The returned function gives every process back the CPUs it had. With fewer than two CPUs
// nothing is pinned and ok is false.
func (s *Sandbox) separateControlPlane() (restore func(), ok bool, err error) {
	cpus, err := testenv.Affinity(os.Getpid())
	if err != nil || len(cpus) < 2 {
		return func() {}, false, err
	}
	control, rest := cpus[:1], cpus[1:]
	plan := map[int][]int{os.Getpid(): rest}
	if s.Moto != nil {
		plan[s.Moto.PID()] = rest
	}
	for _, pid := range s.CP.PIDs() {
		plan[pid] = control
	}
	pids := make([]int, 0, len(plan))
	for pid := range plan {
		pids = append(pids, pid)
	}
	sort.Ints(pids)
	had := map[int][]int{}
	for _, pid := range pids {
		if had[pid], err = testenv.Affinity(pid); err != nil {
			return func() {}, false, fmt.Errorf("separating the control plane's CPU: %w", err)
		}
	}
	restore = func() {
		for _, pid := range pids {
			if err := testenv.PinCPUs(pid, had[pid]); err != nil {
				s.Log.Warn("giving a process its CPUs back", "pid", pid, "error", err)
			}
		}
	}
	for _, pid := range pids {
		if err := testenv.PinCPUs(pid, plan[pid]); err != nil {
			restore()
			return func() {}, false, fmt.Errorf("separating the control plane's CPU: %w", err)
		}
	}
	return restore, true, nil
}
