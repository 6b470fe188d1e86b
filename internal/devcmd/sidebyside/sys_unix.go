//go:build unix

package main

import (
	"os"
	"syscall"
)

// syncDisks writes every dirty page back, so that files just made do not
// slow the runs that follow.
func syncDisks() { syscall.Sync() }

// maxRSS is the peak resident size of a finished process, as getrusage
// gives it (KiB on Linux).
func maxRSS(p *os.ProcessState) int64 {
	if ru, ok := p.SysUsage().(*syscall.Rusage); ok {
		return int64(ru.Maxrss)
	}
	return 0
}
