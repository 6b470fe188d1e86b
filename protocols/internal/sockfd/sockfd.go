// Package sockfd reaches the socket under a connection, for the socket
// options and system calls the net package does not offer.
package sockfd

import (
	"net"
	"syscall"
)

// Raw returns the raw connection under c, or false when c has none (a
// TLS connection, a pipe, a wrapper that hides it).
func Raw(c net.Conn) (syscall.RawConn, bool) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil, false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil, false
	}
	return rc, true
}
