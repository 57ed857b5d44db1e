//go:build linux

package testenv

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// PinCPUs restricts every thread of process pid to cpus (all CPUs when cpus is empty). Threads the
// process starts later inherit the set from the thread that starts them.
func PinCPUs(pid int, cpus []int) error {
	var set unix.CPUSet
	if len(cpus) == 0 {
		for i := range CPUs() {
			set.Set(i)
		}
	}
	for _, c := range cpus {
		set.Set(c)
	}
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return fmt.Errorf("listing the threads of process %d: %w", pid, err)
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		// A thread that ended since the listing is no error.
		if err := unix.SchedSetaffinity(tid, &set); err != nil && err != unix.ESRCH {
			return fmt.Errorf("pinning thread %d of process %d: %w", tid, pid, err)
		}
	}
	return nil
}

// CPUs is how many CPUs this machine has online.
func CPUs() int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return 1
	}
	// The set of a process that was itself pinned would undercount; count what the machine has.
	n := 0
	for i := range 1024 {
		if _, err := os.Stat(fmt.Sprintf("/sys/devices/system/cpu/cpu%d", i)); err != nil {
			break
		}
		n++
	}
	return max(n, set.Count())
}
