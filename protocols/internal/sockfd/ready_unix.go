//go:build unix

package sockfd

import (
	"net"

	"golang.org/x/sys/unix"
)

// Readable reports whether a read of c would return at once (bytes, the
// end, or an error are waiting), by a poll that does not wait; known is
// false where it cannot tell (no socket under c). A connection already
// closed is readable: its read fails at once.
func Readable(c net.Conn) (ready, known bool) {
	rc, ok := Raw(c)
	if !ok {
		return false, false
	}
	err := rc.Control(func(fd uintptr) {
		p := [1]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			n, err := unix.Poll(p[:], 0)
			if err == unix.EINTR {
				continue
			}
			ready = err != nil || n > 0 && p[0].Revents != 0
			return
		}
	})
	if err != nil {
		return true, true // closed
	}
	return ready, true
}
