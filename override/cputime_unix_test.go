//go:build unix

package override_test

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user and system) the process has used so far. The fleet
// benchmarks report it per render next to the wall time: on a machine shared with other
// work, the wall time also counts the time spent waiting for a CPU, the CPU time does not.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
