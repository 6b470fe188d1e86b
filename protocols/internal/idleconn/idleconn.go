// Package idleconn tells whether a connection kept idle in a pool can
// carry the next request: the server has not closed it, nor sent anything
// unasked (an FTP server's "421 Timeout." before it hangs up, an NNTP
// server's "400" or "503"). A connection that fails the check is dropped
// and replaced by its pool, never reported to the caller.
package idleconn

import "net"

// Usable reports whether c, an idle connection between requests, is still
// open with nothing waiting to be read. It never blocks. Where the check
// cannot be made (no socket under c, or a system without a non-blocking
// peek) it reports true, and the pool's retry of a reused connection that
// fails covers the rest.
func Usable(c net.Conn) bool {
	for {
		u, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			break
		}
		c = u.NetConn() // under TLS: unread bytes on the socket are a record the server sent unasked
	}
	return usable(c)
}
