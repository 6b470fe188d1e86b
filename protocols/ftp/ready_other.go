//go:build !unix

package ftp

import "net"

// readable reports whether a read of c would return at once; here it
// cannot tell.
func readable(net.Conn) bool { return false }
