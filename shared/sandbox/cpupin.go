package sandbox

import (
	"fmt"
	"os"
	"sort"

	"github.com/nodewright/nodewright/shared/testenv"
)

// separateControlPlane gives the control plane (etcd, kube-apiserver, kube-scheduler,
// kube-controller-manager) CPU 0 to itself and puts moto and this process (the functions, the webhook,
// the node agent) on the other CPUs, so a measurement of kube-scheduler is not a measurement of how much
// CPU the emulated cloud took from it: in a cluster, AWS and Lambda run elsewhere. The returned function
// gives every process all CPUs again. On a machine with one CPU nothing is pinned and ok is false.
func (s *Sandbox) separateControlPlane() (restore func(), ok bool, err error) {
	n := testenv.CPUs()
	if n < 2 {
		return func() {}, false, nil
	}
	var rest []int
	for c := 1; c < n; c++ {
		rest = append(rest, c)
	}
	plan := map[int][]int{os.Getpid(): rest}
	if s.Moto != nil {
		plan[s.Moto.PID()] = rest
	}
	for _, pid := range s.CP.PIDs() {
		plan[pid] = []int{0}
	}
	pids := make([]int, 0, len(plan))
	for pid := range plan {
		pids = append(pids, pid)
	}
	sort.Ints(pids)
	restore = func() {
		for _, pid := range pids {
			if err := testenv.PinCPUs(pid, nil); err != nil {
				s.Log.Warn("giving a process all CPUs again", "pid", pid, "error", err)
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
