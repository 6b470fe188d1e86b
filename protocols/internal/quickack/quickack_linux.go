//go:build linux

package quickack

import (
	"net"

	"golang.org/x/sys/unix"

	"github.com/urlderef/deref/protocols/internal/sockfd"
)

// arm sets TCP_QUICKACK on c if it is a socket, and says whether it is.
func arm(c net.Conn) bool {
	rc, ok := sockfd.Raw(c)
	if !ok {
		return false
	}
	rc.Control(func(fd uintptr) {
		unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_QUICKACK, 1)
	})
	return true
}
