//go:build unix

package testserver

import (
	"os"
	"runtime"
	"syscall"
)

// MaxRSS is a finished process's peak resident memory in bytes, or -1.
func MaxRSS(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return -1
	}
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss) // bytes there
	}
	return int64(ru.Maxrss) * 1024 // KiB elsewhere
}
