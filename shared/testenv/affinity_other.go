//go:build !linux

package testenv

import (
	"errors"
	"runtime"
)

// PinCPUs is not available off Linux.
func PinCPUs(int, []int) error { return errors.New("pinning processes to CPUs needs Linux") }

// CPUs is how many CPUs this machine has.
func CPUs() int { return runtime.NumCPU() }
