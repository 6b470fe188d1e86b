//go:build unix

package ftp

import (
	"net"

	"golang.org/x/sys/unix"

	"github.com/urlderef/deref/protocols/internal/sockfd"
)

// readable reports whether a read of c would return at once: bytes, the
// end, or an error are waiting (a peek that does not block). False when
// it cannot tell.
func readable(c net.Conn) bool {
	rc, ok := sockfd.Raw(c)
	if !ok {
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
