package testenv

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Affinity is the CPUs process pid's main thread may run on, in ascending order.
func Affinity(pid int) ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(pid, &set); err != nil {
		return nil, fmt.Errorf("reading the CPUs of process %d: %w", pid, err)
	}
	var cpus []int
	for c := 0; len(cpus) < set.Count(); c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

// PinCPUs restricts every thread of process pid to cpus. Threads the process starts later inherit the
// set from the thread that starts them.
func PinCPUs(pid int, cpus []int) error {
	if len(cpus) == 0 {
		return fmt.Errorf("pinning process %d: no CPU given", pid)
	}
	var set unix.CPUSet
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
