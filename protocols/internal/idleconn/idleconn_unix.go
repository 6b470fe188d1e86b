//go:build unix

package idleconn

import (
	"net"

	"golang.org/x/sys/unix"

	"github.com/urlderef/deref/protocols/internal/sockfd"
)

// usable peeks at the socket without waiting: nothing there (EAGAIN) is
// an idle connection; a byte, the end (0 bytes) or an error is not.
func usable(c net.Conn) bool {
	rc, ok := sockfd.Raw(c)
	if !ok {
		return true
	}
	ok = true
	err := rc.Control(func(fd uintptr) {
		var b [1]byte
		for {
			_, _, err := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
			switch err {
			case unix.EINTR:
				continue
			case unix.EAGAIN:
				ok = true
			default: // nil: a byte waits or the server closed; else the socket failed
				ok = false
			}
			return
		}
	})
	return ok && err == nil
}
