//go:build unix

package ftp

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// readable reports whether a read of c would return at once: bytes, the
// end, or an error are waiting (a peek that does not block). False when
// it cannot tell.
func readable(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	ready := false
	rc.Control(func(fd uintptr) {
		var b [1]byte
		_, _, err := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
		ready = err != unix.EAGAIN && err != unix.EWOULDBLOCK && err != unix.EINTR
	})
	return ready
}
