package scalebench

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
)

// ProfileDirEnv names a folder in which a child writes, for each run, a CPU profile and a heap profile
// taken at the run's end (<function>-<run>.cpu.pprof, <function>-<run>.heap.pprof): where a run spends
// its time and what it keeps. Unset, nothing is profiled.
const ProfileDirEnv = "NW_SCALE_PROFILE_DIR"

// startProfile starts the CPU profile of run n of fn when ProfileDirEnv is set; the function it returns
// stops it and writes the heap profile. A profile that cannot be written is said on standard error and
// does not fail the run.
func startProfile(fn string, n int) func() {
	dir := os.Getenv(ProfileDirEnv)
	if dir == "" {
		return func() {}
	}
	base := filepath.Join(dir, fmt.Sprintf("%s-%d", fn, n))
	cpu, err := os.Create(base + ".cpu.pprof")
	if err != nil {
		fmt.Fprintf(os.Stderr, "profile: %v\n", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(cpu); err != nil {
		fmt.Fprintf(os.Stderr, "profile: %v\n", err)
		cpu.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		cpu.Close()
		heap, err := os.Create(base + ".heap.pprof")
		if err != nil {
			fmt.Fprintf(os.Stderr, "profile: %v\n", err)
			return
		}
		defer heap.Close()
		runtime.GC()
		if err := pprof.WriteHeapProfile(heap); err != nil {
			fmt.Fprintf(os.Stderr, "profile: %v\n", err)
		}
	}
}
