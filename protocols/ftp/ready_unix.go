//go:build unix

package ftp

import (
	"net"

	"golang.org/x/sys/unix"

	"github.com/urlderef/deref/protocols/internal/sockfd"
)

// readable reports whether a read of c would return at once: bytes, the
// end, or an error are waiting (a poll that does not wait). False when it
// cannot tell.
func readable(c net.Conn) bool {
	rc, ok := sockfd.Raw(c)
	if !ok {
		return false
	}
	ready := false
	rc.Control(func(fd uintptr) {
		p := [1]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(p[:], 0)
		ready = err == nil && n > 0 && p[0].Revents != 0
	})
	return ready
}
