package ftp

import (
	"net"

	"github.com/urlderef/deref/protocols/internal/sockfd"
)

// readable reports whether a read of c would return at once: bytes, the
// end, or an error are waiting (a poll that does not wait). False when it
// cannot tell.
func readable(c net.Conn) bool {
	ready, _ := sockfd.Readable(c)
	return ready
}
