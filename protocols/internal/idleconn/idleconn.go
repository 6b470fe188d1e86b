// Package idleconn tells whether a connection kept idle in a pool can
// carry the next request: the server has not closed it, nor sent anything
// unasked (an FTP server's "421 Timeout." before it hangs up, an NNTP
// server's "400" or "503"). A connection that fails the check is dropped
// and replaced by its pool, never reported to the caller.
package idleconn

import (
	"net"

	"github.com/urlderef/deref/protocols/internal/sockfd"
)

// Usable reports whether c, an idle connection between requests, is still
// open with nothing waiting to be read, by a poll that does not wait
// (sockfd.Readable). Where the check cannot be made (no socket under c,
// or a system without a poll) it reports true, and the pool's retry of
// a reused connection that fails covers the rest.
func Usable(c net.Conn) bool {
	for {
		u, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			break
		}
		c = u.NetConn() // under TLS: unread bytes on the socket are a record the server sent unasked
	}
	// Nothing may be waiting: a byte, the end or an error is the
	// server's word that the connection is over (or unasked for).
	ready, known := sockfd.Readable(c)
	return !known || !ready
}
