//go:build unix

package gateway

import "syscall"

// fdLimit is the process's soft limit on open file descriptors.
func fdLimit() int {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil || r.Cur > 1<<20 {
		return 1 << 20
	}
	return int(r.Cur)
}
