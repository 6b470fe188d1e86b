//go:build unix

package mirror

import (
	"errors"
	"syscall"
	"time"
)

// probeStale says whether a case probe that process pid made is left
// over: no such process is running (a probe lives for a few system
// calls, and its process removes it).
func probeStale(pid int, _ time.Time) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
