//go:build linux

package quickack

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// arm sets TCP_QUICKACK on c if it is a socket, and says whether it is.
func arm(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	rc.Control(func(fd uintptr) {
		unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_QUICKACK, 1)
	})
	return true
}
