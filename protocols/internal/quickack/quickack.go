// Package quickack makes a connection acknowledge what it receives at
// once, where the system lets a program ask for that.
//
// A server that answers a command with a status line and then the rest
// in a second write, its socket left with Nagle's algorithm on (INN's
// nnrpd answering ARTICLE, OVER or LIST), holds the rest back until the
// status line is acknowledged; a client that has nothing to send delays
// that acknowledgement, on Linux by about 40 ms. Every article of a
// newsgroup then cost 40 ms more than the exchange itself. Linux's
// TCP_QUICKACK asks the kernel to acknowledge at once; it does not last
// (the kernel goes back to delaying), so a client arms it before each
// reply it waits for.
package quickack

import "net"

// Arm asks c, or the TCP connection beneath it (TLS, or a wrapper with a
// NetConn method), to acknowledge what comes next at once. It does
// nothing where that cannot be asked.
func Arm(c net.Conn) {
	for {
		if arm(c) {
			return
		}
		u, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			return
		}
		c = u.NetConn()
	}
}
