//go:build unix

package crawl_test

import (
	"os"
	"runtime"
	"syscall"
)

// maxRSS is a finished process's peak resident memory in bytes, or -1.
func maxRSS(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return -1
	}
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss) // bytes there
	}
	return int64(ru.Maxrss) * 1024 // KiB elsewhere
}
