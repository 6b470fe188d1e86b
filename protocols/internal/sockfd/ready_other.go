//go:build !unix

package sockfd

import "net"

// Readable cannot tell here without a read: known is false.
func Readable(net.Conn) (ready, known bool) { return false, false }
