package testenv

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's times: 100 on every Linux architecture Go
// supports.
const clockTicks = 100

// CPUTime is the CPU time process pid has used so far, user and system, all its threads (utime and
// stime of /proc/<pid>/stat, to 10 ms).
func CPUTime(pid int) (time.Duration, error) {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, fmt.Errorf("reading the CPU time of process %d: %w", pid, err)
	}
	return parseStatCPU(string(raw))
}

// parseStatCPU reads utime + stime from a /proc/<pid>/stat line. The command name (field 2) is in
// parentheses and may hold spaces, so the fields are counted from the last ')'.
func parseStatCPU(stat string) (time.Duration, error) {
	end := strings.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, fmt.Errorf("unexpected /proc stat line %q", stat)
	}
	// After ")": state (field 3), ... utime is field 14, stime field 15.
	fields := strings.Fields(stat[end+1:])
	if len(fields) < 13 {
		return 0, fmt.Errorf("unexpected /proc stat line %q", stat)
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("unexpected /proc stat line %q: %w", stat, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}
