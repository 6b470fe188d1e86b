//go:build !unix

package idleconn

import "net"

// usable cannot peek here without blocking: the pool's retry of a reused
// connection that fails covers a server that hung up.
func usable(net.Conn) bool { return true }
