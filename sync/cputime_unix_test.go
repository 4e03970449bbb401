//go:build unix

package sync_test

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user and system) the process has used so far. The propagation
// benchmark reports it per member object next to the wall time: on a machine shared with other
// work, the wall time also counts the time spent waiting for a CPU, the CPU time does not.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
